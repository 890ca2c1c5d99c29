"""The prompt-template language: its tokenizer and the engine that fills it."""
