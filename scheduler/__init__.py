"""The stream consumer that turns turns into episodes and episodes into review batches."""
