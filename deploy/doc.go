// Package deploy holds what runs stockbench's shards on Kubernetes: the image's
// Dockerfile and the manifests in k8s/, which its test decodes strictly with the
// Kubernetes API types and checks against the flags and environment stockbench reads.
package deploy
