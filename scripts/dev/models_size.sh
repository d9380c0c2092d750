#!/usr/bin/env bash
# Issue 30's line count for core/src/models (core/src/models/README.md, section "Size"):
#   counted  the files the round-2 families need (shared files in full), leaving out the
#            round-3 families and extras and the families added after the count was defined
#            (019928f: CLIP, SigLIP, Swin, DeBERTa and their helpers)
#   folder   every .cpp and .h of core/src/models without builtin/
# Usage: scripts/dev/models_size.sh [-v]   (-v lists the counted files with their sizes)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../core/src/models"
excluded='^(mixtral|qwen2_moe|olmoe|moe\.|deit|dinov2|beit|modernbert|gguf_model|kv_cache\.|generation\.cpp|gradient_runner\.h|layer_runner\.h|decoder_readout\.|model_catalog\.cpp|decoder_runners\.cpp|encoder_gradients\.cpp|clip|siglip|swin|deberta|image_text)'
counted=$(ls ./*.cpp ./*.h | sed 's#^\./##' | grep -Ev "$excluded")
# shellcheck disable=SC2086
[ "${1:-}" = -v ] && wc -l $counted | sort -n
# shellcheck disable=SC2086
echo "counted: $(cat $counted | wc -l)"
echo "folder:  $(cat ./*.cpp ./*.h | wc -l)"
