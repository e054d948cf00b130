//go:build long

package deploy

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// built is what kubectl apply -k would send: one kustomization's objects by kind and name.
type built map[string][]byte

// build runs the kustomization in dir, as kubectl apply -k does, on fsys.
func build(t *testing.T, fsys filesys.FileSystem, dir string) built {
	t.Helper()
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fsys, dir)
	if err != nil {
		t.Fatalf("kustomize %s: %v", dir, err)
	}
	out := built{}
	for _, r := range m.Resources() {
		b, err := r.AsYAML()
		if err != nil {
			t.Fatal(err)
		}
		out[r.GetKind()+"/"+r.GetName()] = b
	}
	return out
}

// decode reads one built object strictly: a field the Kubernetes API type does not have is
// an error, as kubectl apply --validate=strict would make it.
func decode[T any](t *testing.T, b built, key string) T {
	t.Helper()
	var v T
	raw, ok := b[key]
	if !ok {
		t.Fatalf("no %s among %v", key, keys(b))
	}
	if err := yaml.UnmarshalStrict(raw, &v); err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	return v
}

func keys(b built) []string {
	var ks []string
	for k := range b {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func env(c corev1.Container, name string) *corev1.EnvVar {
	for i := range c.Env {
		if c.Env[i].Name == name {
			return &c.Env[i]
		}
	}
	return nil
}

// sale is what the two kustomizations make of one sharded run.
type sale struct {
	pvc           corev1.PersistentVolumeClaim
	secret        corev1.Secret
	shards, merge batchv1.Job
}

func buildSale(t *testing.T, fsys filesys.FileSystem, root string) sale {
	t.Helper()
	s := build(t, fsys, root)
	m := build(t, fsys, filepath.Join(root, "merge"))
	return sale{
		pvc:    decode[corev1.PersistentVolumeClaim](t, s, "PersistentVolumeClaim/stockbench-results"),
		secret: decode[corev1.Secret](t, s, "Secret/stockbench-redis"),
		shards: decode[batchv1.Job](t, s, "Job/stockbench-shards"),
		merge:  decode[batchv1.Job](t, m, "Job/stockbench-merge"),
	}
}

// TestManifestsDecodeStrictly builds both kustomizations, decodes every object with its
// API type and checks that they make one sharded run: an Indexed Job whose every shard
// runs at once, told the shard count and the run's name, on the Redis in the Secret,
// writing to the volume the merge step reads that same run from, as a user with no rights.
func TestManifestsDecodeStrictly(t *testing.T) {
	s := buildSale(t, filesys.MakeFsOnDisk(), "k8s")
	if !slices.Contains(s.pvc.Spec.AccessModes, corev1.ReadWriteMany) {
		t.Errorf("the results volume is mounted by pods on several nodes: want ReadWriteMany, got %v", s.pvc.Spec.AccessModes)
	}

	spec := s.shards.Spec
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
	if url == nil || url.ValueFrom == nil || url.ValueFrom.SecretKeyRef == nil || url.ValueFrom.SecretKeyRef.Name != s.secret.Name {
		t.Errorf("shards: the Redis URL (with its password) comes from the Secret %s", s.secret.Name)
	} else if _, ok := s.secret.StringData[url.ValueFrom.SecretKeyRef.Key]; !ok {
		t.Errorf("shards: the Secret has no key %q", url.ValueFrom.SecretKeyRef.Key)
	}
	runID := env(c, "STOCKBENCH_RUN_ID")
	if runID == nil || runID.Value == "" {
		t.Fatal("shards: STOCKBENCH_RUN_ID names the run, for the shards and the merge")
	}

	m := s.merge.Spec.Template.Spec.Containers[0]
	if m.Args[0] != "merge" || m.Args[1] != "/results/"+runID.Value {
		t.Errorf("merge: want merge /results/%s (the shards' run directory), got %v", runID.Value, m.Args)
	}
	user := dockerfileUser(t)
	for _, job := range []batchv1.Job{s.shards, s.merge} {
		pod := job.Spec.Template.Spec
		mounts := pod.Containers[0].VolumeMounts
		claim := slices.IndexFunc(pod.Volumes, func(v corev1.Volume) bool {
			return v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == s.pvc.Name
		})
		at := slices.IndexFunc(mounts, func(v corev1.VolumeMount) bool { return v.MountPath == "/results" })
		if claim < 0 || at < 0 || mounts[at].Name != pod.Volumes[claim].Name {
			t.Errorf("%s: want the claim %s mounted at /results", job.Name, s.pvc.Name)
		}
		if img := pod.Containers[0].Image; img != c.Image {
			t.Errorf("%s: image %s, the shards' is %s", job.Name, img, c.Image)
		}
		checkLocked(t, job.Name, pod, user)
	}
}

// checkLocked: the pod runs as the image's user, not root, and its container can neither
// gain privileges nor write outside its volumes.
func checkLocked(t *testing.T, name string, pod corev1.PodSpec, user int64) {
	t.Helper()
	ps, cs := pod.SecurityContext, pod.Containers[0].SecurityContext
	if ps == nil || ps.RunAsNonRoot == nil || !*ps.RunAsNonRoot || ps.RunAsUser == nil || *ps.RunAsUser != user ||
		ps.FSGroup == nil || ps.SeccompProfile == nil || ps.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("%s: want a pod securityContext with runAsNonRoot, runAsUser %d (the image's USER), fsGroup (the volume writable) and the RuntimeDefault seccomp profile", name, user)
	}
	if cs == nil || cs.AllowPrivilegeEscalation == nil || *cs.AllowPrivilegeEscalation ||
		cs.ReadOnlyRootFilesystem == nil || !*cs.ReadOnlyRootFilesystem ||
		cs.Capabilities == nil || !slices.Contains(cs.Capabilities.Drop, "ALL") {
		t.Errorf("%s: want a container securityContext with no privilege escalation, a read-only root and every capability dropped", name)
	}
}

// dockerfileUser is the numeric user the image runs as.
func dockerfileUser(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^USER (\d+):\d+$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("Dockerfile: want USER uid:gid, a numeric user (a FROM scratch image has no /etc/passwd)")
	}
	uid, _ := strconv.ParseInt(string(m[1]), 10, 64)
	if uid == 0 {
		t.Fatal("Dockerfile: the image runs as root")
	}
	return uid
}

// TestSaleSaidOnce changes the shard count and the run's name in sale/sale.env alone, and
// finds them everywhere a sharded run needs them: in the Kubernetes manifests as
// kubectl apply -k builds them, and in the swarm stack as bench-swarm deploys it.
func TestSaleSaidOnce(t *testing.T) {
	mem := filesys.MakeFsInMemory()
	for _, dir := range []string{"k8s", "sale", "swarm"} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if path == filepath.Join("sale", "sale.env") {
				b = bytes.Replace(b, []byte("STOCKBENCH_SHARDS=4"), []byte("STOCKBENCH_SHARDS=7"), 1)
				b = bytes.Replace(b, []byte("STOCKBENCH_RUN_ID=flash-sale-1"), []byte("STOCKBENCH_RUN_ID=drop-2"), 1)
			}
			return mem.WriteFile("/"+path, b)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	s := buildSale(t, mem, "/k8s")
	c := s.shards.Spec.Template.Spec.Containers[0]
	saleEnv, err := mem.ReadFile("/sale/sale.env")
	if err != nil {
		t.Fatal(err)
	}
	w := buildSwarm(t, func(p string) ([]byte, error) { return mem.ReadFile("/" + p) }, readEnv(t, saleEnv))
	got := []string{
		strconv.Itoa(int(*s.shards.Spec.Completions)), strconv.Itoa(int(*s.shards.Spec.Parallelism)),
		env(c, "STOCKBENCH_SHARDS").Value, env(c, "STOCKBENCH_RUN_ID").Value,
		s.merge.Spec.Template.Spec.Containers[0].Args[1],
		strconv.Itoa(*w.shard.Deploy.Replicas), w.shard.Environment["STOCKBENCH_SHARDS"], w.shard.Environment["STOCKBENCH_RUN_ID"],
		w.merge.Command[1],
	}
	if want := []string{"7", "7", "7", "drop-2", "/results/drop-2", "7", "7", "drop-2", "/results/drop-2"}; !slices.Equal(got, want) {
		t.Errorf("Kubernetes' completions, parallelism, STOCKBENCH_SHARDS, STOCKBENCH_RUN_ID, the merge's path, then swarm's replicas, STOCKBENCH_SHARDS, STOCKBENCH_RUN_ID, the merge's path: got %v, want %v", got, want)
	}
}

// TestEveryManifestIsApplied: each manifest is a resource of one of the kustomizations, so
// that kubectl apply -k leaves none behind.
func TestEveryManifestIsApplied(t *testing.T) {
	var listed []string
	for _, k := range []string{"k8s/kustomization.yaml", "k8s/merge/kustomization.yaml"} {
		b, err := os.ReadFile(k)
		if err != nil {
			t.Fatal(err)
		}
		var kz struct{ Resources []string }
		if err := yaml.Unmarshal(b, &kz); err != nil {
			t.Fatal(err)
		}
		for _, r := range kz.Resources {
			listed = append(listed, filepath.Join(filepath.Dir(k), r))
		}
	}
	files, _ := filepath.Glob("k8s/*.yaml")
	more, _ := filepath.Glob("k8s/*/*.yaml")
	for _, f := range append(files, more...) {
		if strings.HasSuffix(f, "kustomization.yaml") {
			continue
		}
		if !slices.Contains(listed, f) {
			t.Errorf("%s is in no kustomization's resources", f)
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
