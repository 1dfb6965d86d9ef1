"""An opt-in int8 copy of a sentence-transformers model, run by ONNX Runtime on a CPU.

The model's transformer is exported to ONNX once, its matrix products quantized to int8
(dynamic, per channel) and the result kept in the cache folder; the model's own pooling
and normalization modules then run on the transformer's output, so a model pooling by
CLS or by mean pools the same way. On two CPU cores this encodes 1.7 times as fast as the
fp32 model; cosine similarities move by 0.012 on average, 95 % of them by under 0.03, the
worst of the benchmark's 5,000 pairs by 0.09 (``bench/bench_embedding.py --precision int8``
prints these figures).

Why our own export: ``optimum`` (what sentence-transformers' ONNX backend needs) pins an
older ``transformers`` than evalnb's classifiers load with.
"""

from __future__ import annotations

import hashlib
import logging
import tempfile
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from evalnb.lab.errors import EvalnbError

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["Int8Encoder"]

_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def _runtime() -> tuple[Any, Any]:
    try:
        import onnxruntime  # noqa: PLC0415
        from onnxruntime.quantization import QuantType, quantize_dynamic  # noqa: PLC0415
    except ImportError as exc:
        msg = (
            "precision='int8' runs the model with ONNX Runtime, which is not installed "
            f"({exc}); pip install 'evalnb[onnx]', or use precision='fp32'"
        )
        raise EvalnbError(msg) from None
    return onnxruntime, (quantize_dynamic, QuantType)


class Int8Encoder:
    """Encode texts with an int8 ONNX copy of a loaded ``SentenceTransformer``.

    Parameters
    ----------
    model
        The fp32 model (its tokenizer, maximum length and pooling modules are used).
    model_id
        Its identity: names the cached copy, so each model is exported once.
    folder
        Where the int8 copies are kept (a subfolder per model).
    """

    def __init__(self, model: Any, model_id: str, folder: Path) -> None:  # noqa: ANN401
        ort, _ = _runtime()
        self._model = model
        self._tokenizer = model[0].tokenizer
        self._inputs = [k for k in _INPUTS if k in self._tokenizer(["a"])]
        key = hashlib.sha1(model_id.encode()).hexdigest()[:16]
        path = folder / "int8" / key / "model.onnx"
        if not path.is_file():
            self._build(path)
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self._session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    def _build(self, path: Path) -> None:
        """Export the transformer, quantize it, and move the result into place at once."""
        import torch  # noqa: PLC0415

        _, (quantize_dynamic, quant_type) = _runtime()
        names = self._inputs
        transformer = self._model[0].auto_model.eval()

        class _Hidden(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.inner = transformer

            def forward(self, *tensors: torch.Tensor) -> torch.Tensor:
                hidden: torch.Tensor = self.inner(**dict(zip(names, tensors, strict=True)))[0]
                return hidden  # last_hidden_state

        sample = self._tokenizer(
            ["an example", "a longer example text"], padding=True, return_tensors="pt"
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=path.parent) as work:
            fp32, int8 = Path(work) / "fp32.onnx", Path(work) / "int8.onnx"
            axes = {n: {0: "batch", 1: "tokens"} for n in [*names, "hidden"]}
            with warnings.catch_warnings(), torch.no_grad():
                # The TorchScript exporter warns about its own deprecation and tracing.
                warnings.simplefilter("ignore")
                try:
                    torch.onnx.export(
                        _Hidden(),
                        tuple(sample[n] for n in names),
                        str(fp32),
                        input_names=names,
                        output_names=["hidden"],
                        dynamic_axes=axes,
                        opset_version=17,
                        dynamo=False,
                    )
                except Exception as exc:
                    # Seen on a GPU machine (Python 3.12, torch 2.11, numpy 2.5.2): "ScalarType
                    # ComplexDouble is an unexpected tensor scalar type", while the same torch
                    # and transformers with numpy 2.4 export fine. Say so rather than fail deep
                    # inside the exporter.
                    msg = (
                        f"precision='int8' could not export the model to ONNX with torch "
                        f"{torch.__version__} and numpy {np.__version__} "
                        f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}); "
                        "use precision='fp32', or an environment where torch.onnx.export works "
                        "(tested: torch 2.11-2.13 with numpy 2.4)"
                    )
                    raise EvalnbError(msg) from exc
                # Matrix products only, per channel: the smallest loss of the settings tried
                # (see the module docstring); the other operators stay fp32. The quantizer
                # logs advice to the root logger, which a notebook would print: muted.
                root = logging.getLogger()
                level = root.level
                root.setLevel(logging.ERROR)
                try:
                    quantize_dynamic(
                        str(fp32),
                        str(int8),
                        weight_type=quant_type.QInt8,
                        per_channel=True,
                        op_types_to_quantize=["MatMul"],
                    )
                finally:
                    root.setLevel(level)
            int8.replace(path)

    def encode(self, texts: Sequence[str], batch_size: int) -> np.ndarray:
        """Embeddings of ``texts`` (float32, in order), ``batch_size`` texts per run."""
        import torch  # noqa: PLC0415

        parts = []
        limit = self._model.max_seq_length
        for start in range(0, len(texts), batch_size):
            batch = list(texts[start : start + batch_size])
            encoded = self._tokenizer(
                batch, padding=True, truncation=True, max_length=limit, return_tensors="np"
            )
            feed = {n: encoded[n].astype(np.int64) for n in self._inputs}
            hidden = self._session.run(None, feed)[0]
            features = {
                "token_embeddings": torch.from_numpy(hidden),
                "attention_mask": torch.from_numpy(feed["attention_mask"]),
            }
            with torch.no_grad():
                for module in list(self._model)[1:]:  # pooling, normalization, dense …
                    features = module(features)
            parts.append(features["sentence_embedding"].numpy().astype(np.float32))
        return np.concatenate(parts) if parts else np.zeros((0, 0), dtype=np.float32)
