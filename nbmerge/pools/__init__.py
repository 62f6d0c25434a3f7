"""Model pools: the embedded zoos (store, build, open), expert training, IVON posteriors, CLIP pool import, fakes."""
