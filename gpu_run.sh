#!/usr/bin/env bash
# temporary: one device call (deleted before commit)
set -u
what="$1"
P=/opt/torch/.venv/bin/python3
bash scripts/gpu_machine.sh setup > $OUT/setup.log 2>&1; tail -3 $OUT/setup.log
export PYTHONPATH=$PWD/python:$PWD/.devbundle/pylib PYTHONUNBUFFERED=1
if [ "$what" = tests ]; then
  $P -m pytest -q -p no:cacheprovider --collect-only test/python/test_opinfo.py -k cuda 2>/dev/null | grep '::' > /tmp/ids.txt
  wc -l /tmp/ids.txt
  split -n r/5 /tmp/ids.txt /tmp/shard_
  for s in /tmp/shard_*; do
    ( $P -m pytest -q -p no:cacheprovider -rf $(cat $s) > $OUT/opinfo_$(basename $s).log 2>&1 ) &
  done
  $P -m pytest -q -p no:cacheprovider -rf test/python/test_gpu.py test/python/test_library_ops.py test/python/test_windows.py \
     test/python/test_gather.py test/python/test_model_zoo.py test/python/test_views.py test/python/test_eager_semantics.py \
     test/python/test_cuda_graphs.py test/python/test_internals.py test/python/test_special_ops.py test/python/test_resample.py \
     > $OUT/gpu_tests.log 2>&1
  tail -15 $OUT/gpu_tests.log
  wait
  for f in $OUT/opinfo_*.log; do tail -1 $f; done
  grep -h "^FAILED" $OUT/opinfo_*.log | head -30
fi
if [ "$what" = models ]; then
  $P -m pytest -q -p no:cacheprovider -rf test/python/test_model_zoo.py test/python/test_opinfo.py -k "mixtral or (histc and cuda) or (unfold and cuda) or (fold and cuda)" 2>&1 | tail -4
  timeout 330 $P benchmarks/models.py --device cuda --size full --modes eval --rounds 3 --reps 10 --no-inductor --json $OUT/models.json > $OUT/models.log 2>&1
  tail -25 $OUT/models.log
  timeout 200 $P benchmarks/model_sweep.py --device cuda --timeout 60 hf_mixtral hf_phi3 hf_gptj hf_clip_text hf_funnel hf_beit timm_tnt timm_volo timm_crossvit timm_halonet timm_mobilevitv2 hf_mamba 2>&1 | grep -v "^\[tr" | tee $OUT/sweep.log
fi
