// Package deploy holds what runs stockbench's shards on Kubernetes: the image's
// Dockerfile and the kustomizations in k8s/ (the sale said once, in k8s/sale), which its
// test builds as kubectl apply -k would, decodes strictly with the Kubernetes API types and
// checks against the flags and environment stockbench reads.
package deploy
