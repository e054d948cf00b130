package deploy

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// decode reads a manifest strictly: a field the Kubernetes API type does not have is an
// error, as kubectl apply --validate=strict would make it.
func decode[T any](t *testing.T, name string) T {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("k8s", name))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("\n---")) {
		t.Fatalf("%s: one object per file", name)
	}
	var v T
	if err := yaml.UnmarshalStrict(b, &v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return v
}

func env(c corev1.Container, name string) *corev1.EnvVar {
	for i := range c.Env {
		if c.Env[i].Name == name {
			return &c.Env[i]
		}
	}
	return nil
}

// TestManifestsDecodeStrictly decodes every manifest with its API type and checks that
// they make one sharded run: an Indexed Job whose every shard runs at once, told the
// shard count and the run's name, on the Redis in the Secret, writing to the volume the
// merge step reads that same run from.
func TestManifestsDecodeStrictly(t *testing.T) {
	files, _ := filepath.Glob("k8s/*.yaml")
	if len(files) != 4 {
		t.Fatalf("want 4 manifests, got %v", files)
	}
	pvc := decode[corev1.PersistentVolumeClaim](t, "results-pvc.yaml")
	secret := decode[corev1.Secret](t, "redis-secret.yaml")
	shards := decode[batchv1.Job](t, "shards-job.yaml")
	merge := decode[batchv1.Job](t, "merge-job.yaml")
	for _, obj := range []struct{ kind, want, got string }{
		{"PersistentVolumeClaim", "v1", pvc.APIVersion}, {"Secret", "v1", secret.APIVersion},
		{"Job", "batch/v1", shards.APIVersion}, {"Job", "batch/v1", merge.APIVersion},
	} {
		if obj.got != obj.want {
			t.Errorf("%s: apiVersion %q, want %q", obj.kind, obj.got, obj.want)
		}
	}
	if !slices.Contains(pvc.Spec.AccessModes, corev1.ReadWriteMany) {
		t.Errorf("the results volume is mounted by pods on several nodes: want ReadWriteMany, got %v", pvc.Spec.AccessModes)
	}

	spec := shards.Spec
	if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion {
		t.Fatalf("shards: want completionMode Indexed (it sets JOB_COMPLETION_INDEX), got %v", spec.CompletionMode)
	}
	c := spec.Template.Spec.Containers[0]
	n := env(c, "STOCKBENCH_SHARDS")
	if n == nil || spec.Completions == nil || spec.Parallelism == nil {
		t.Fatal("shards: completions, parallelism and STOCKBENCH_SHARDS must all be set")
	}
	count, err := strconv.Atoi(n.Value)
	if err != nil || int32(count) != *spec.Completions || int32(count) != *spec.Parallelism {
		t.Errorf("shards: every shard waits for the others, so completions (%d), parallelism (%d) and STOCKBENCH_SHARDS (%s) must agree",
			*spec.Completions, *spec.Parallelism, n.Value)
	}
	if spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("shards: a restarted shard would meet no one: want restartPolicy Never, got %s", spec.Template.Spec.RestartPolicy)
	}
	if c.Args[0] != "run" || !slices.Contains(c.Args, "--lock") || slices.Contains(c.Args, "--shard") {
		t.Errorf("shards: want run --lock NAME with the shard from the environment, got %v", c.Args)
	}
	url := env(c, "STOCKBENCH_REDIS_URL")
	if url == nil || url.ValueFrom == nil || url.ValueFrom.SecretKeyRef == nil || url.ValueFrom.SecretKeyRef.Name != secret.Name {
		t.Errorf("shards: the Redis URL (with its password) comes from the Secret %s", secret.Name)
	} else if _, ok := secret.StringData[url.ValueFrom.SecretKeyRef.Key]; !ok {
		t.Errorf("shards: the Secret has no key %q", url.ValueFrom.SecretKeyRef.Key)
	}
	runID := env(c, "STOCKBENCH_RUN_ID")
	if runID == nil || runID.Value == "" {
		t.Fatal("shards: STOCKBENCH_RUN_ID names the run, for the shards and the merge")
	}

	m := merge.Spec.Template.Spec.Containers[0]
	if m.Args[0] != "merge" || m.Args[1] != "/results/"+runID.Value {
		t.Errorf("merge: want merge /results/%s (the shards' run directory), got %v", runID.Value, m.Args)
	}
	for _, job := range []batchv1.Job{shards, merge} {
		vols := job.Spec.Template.Spec.Volumes
		mounts := job.Spec.Template.Spec.Containers[0].VolumeMounts
		if len(vols) != 1 || vols[0].PersistentVolumeClaim == nil || vols[0].PersistentVolumeClaim.ClaimName != pvc.Name ||
			len(mounts) != 1 || mounts[0].MountPath != "/results" {
			t.Errorf("%s: want the claim %s mounted at /results", job.Name, pvc.Name)
		}
		if img := job.Spec.Template.Spec.Containers[0].Image; img != c.Image {
			t.Errorf("%s: image %s, the shards' is %s", job.Name, img, c.Image)
		}
	}
}

// TestStrictDecodingRefusesUnknownFields shows the check has teeth: a misspelt field
// fails.
func TestStrictDecodingRefusesUnknownFields(t *testing.T) {
	var j batchv1.Job
	err := yaml.UnmarshalStrict([]byte("apiVersion: batch/v1\nkind: Job\nspec:\n  completionsMode: Indexed\n"), &j)
	if err == nil {
		t.Fatal("a misspelt field decoded")
	}
}
