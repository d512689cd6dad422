"""Encoders: the sentence embedder (`embedder`, the one class that runs all-MiniLM-L6-v2 and EmbeddingGemma), the
relevance judges (`cross_encoder`, the shipped one on llama.cpp; `judges`: the remote and fake judges and
`make_judge`), the llama.cpp encoder context both run on (`llama_encoder`), the torch-free safetensors -> GGUF
converters (`convert`; `gemma_convert` with `sentencepiece_vocab`, `safetensors`, `gguf_file`) and the EmbeddingGemma
supply (`embeddinggemma`, `chunked_zip`). Part of `shelfwise.core.models` (its import rules).
"""
