# Sourced by the sharded benches (bench-distributed.sh, bench-swarm.sh): the merged run's
# row beside the one-process run's, and whether their verdicts' classes agree.

# class DIR: the verdict class of the run in DIR.
class() { grep -m1 -o '"class": "[A-Z-]*"' "$1/results.json" | cut -d'"' -f4; }

# side_by_side LOCK LABEL MERGE_LOG ONE_LOG MERGED_DIR ONE_DIR WHERE: print the table's
# header and both rows, labelled, and say whether the classes agree (WHERE says where to
# look); returns 1 when they do not.
side_by_side() {
  local lock=$1 label=$2 mlog=$3 olog=$4 merged=$5 one=$6 where=$7 w m o
  w=$(( ${#label} > 11 ? ${#label} + 2 : 13 ))
  echo
  sed -n '/^SCENARIO/{s/^/'"$(printf "%-${w}s" RUN)"'/;p;n;s/^/'"$(printf "%-${w}s" "$label")"'/;p}' "$mlog"
  sed -n '/^SCENARIO/{n;s/^/'"$(printf "%-${w}s" "one process")"'/;p}' "$olog"
  echo
  m=$(class "$merged") o=$(class "$one")
  if [ "$m" = "$o" ]; then
    echo "$lock: merged $m, one process $o: the same class ($where)" >&2
    return 0
  fi
  echo "$lock: merged $m but one process $o" >&2
  return 1
}
