"""The embedded model zoo: offline tasks (`data`), a tiny open_clip ViT, its experts, heads and evaluation."""
