package main

import (
	"context"
	"flag"
	"io"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/bench/analysis"
)

// analyseCommand is `stockbench analyse CLAIMS.json`: a library against its own docs'
// claims, its page written (package analysis); --render DIR renders pages again.
func analyseCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("analyse", "analyse CLAIMS.json [--pages DIR] [flags]   |   analyse --render DIR")
	c, f := new(common), new(analysis.Flags)
	c.bind(fs)
	f.Bind(fs)
	pos, help, err := parseWithArgs(fs, args, stdout)
	if help || err != nil {
		return bench.Complain(stderr, err)
	}
	if f.Render != "" {
		return analysis.RenderDir(f.Render, pos, stdout, stderr)
	}
	p, err := f.Prepare(pos, &c.designs, func(fs *flag.FlagSet) { bindDesigns(fs, &c.designs) }, c.redisArgs(), c.out)
	if err != nil {
		return bench.Complain(stderr, bench.UsageError(err))
	}
	e, code := bench.Start(ctx, c.options(append([]string{"analyse"}, args...), nil), stderr)
	if e == nil {
		return code
	}
	defer e.Stop(stderr)
	return p.Run(ctx, e, c.designs.Ms, c.out, stdout, stderr).Tell(stdout)
}
