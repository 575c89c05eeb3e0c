"""Rule-driven rewrites of the scaling paper (sections 3-4, appendix A):
program-to-program transformations, each with its precondition (the
analyses' verdict) and an `apply` returning a new checked `Program`.
docs/rewrites.md describes them."""
