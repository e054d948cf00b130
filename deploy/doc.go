// Package deploy holds what runs stockbench's shards on an orchestrator, the sale said
// once in sale/sale.env: the image's Dockerfile; the Kubernetes kustomizations in k8s/,
// which its test builds as kubectl apply -k would and decodes strictly with the
// Kubernetes API types; the Docker Swarm stack and merge in swarm/ (make bench-swarm runs
// them), decoded strictly with sale.env's settings; and monitoring/, the Prometheus
// scrape of a run's --dashboard and a Grafana dashboard of its series, which the
// command's tests run against a real Prometheus.
package deploy
