"""Sentence encoders: the EmbeddingGemma supply (chunked_zip, embeddinggemma) and its torch-free converter
(gemma_convert, sentencepiece_vocab, safetensors)."""
