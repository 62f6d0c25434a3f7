"""Model families behind the zoos and pools: the tiny ViT, CLIP ViTs, MiniLM, and the Gram recorder."""
