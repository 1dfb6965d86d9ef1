"""The pictures shipped for trying multimodal labs (see :mod:`evalnb.media.sample_lab`)."""
