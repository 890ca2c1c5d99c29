"""The model helps author: proposals of tools and test cases the author accepts or not."""
