// Package deploy holds what runs stockbench's shards on Kubernetes: the image's
// Dockerfile and the kustomizations in k8s/ (the sale said once, in k8s/sale), which its
// test builds as kubectl apply -k would, decodes strictly with the Kubernetes API types and
// checks against the flags and environment stockbench reads; and monitoring/, the
// Prometheus scrape of a run's --dashboard and a Grafana dashboard of its series, which
// the command's tests run against a real Prometheus.
package deploy
