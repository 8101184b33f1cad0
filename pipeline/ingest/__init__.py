"""Stage 1, the write side: untrusted input turned into Turns (client, HTTP, JSONL, stream), session working memory and session end."""
