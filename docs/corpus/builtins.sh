#!/bin/sh
# The built-in models' pruning comparison in docs/corpus.md: held-out corpora from the tasks'
# grammars, then `corpus` on each model (importance order and greedy order), then one figure per
# task. Usage: docs/corpus/builtins.sh [CLI] [WORK]   (defaults: build/app/attnscope-cli, /tmp/attnscope-corpus)
set -eu
cli=${1:-build/app/attnscope-cli}
work=${2:-/tmp/attnscope-corpus}
here=$(dirname "$0")
mkdir -p "$work"
"$cli" builtin-data sentiment --examples 500 --seed 1 --out "$work/sentiment.jsonl"
"$cli" builtin-data reverse --examples 100 --seed 1 --out "$work/reverse.jsonl"
for task in sentiment reverse; do
  for kind in dot additive linear; do
    "$cli" corpus "builtin:$task-$kind" --data "$work/$task.jsonl" --out "$work/$task-$kind" --device cpu --no-plots
    # Greedy order: H(H+1)/2 masked sets per example; cheap for the 4-head sentiment models, about
    # one CPU minute for each 12-head reverse model (78 sets x 100 examples, forced run + greedy
    # decoding). (The reverse results in docs/corpus.md are the first 100 of a 300-example draw:
    # the same lines.)
    "$cli" corpus "builtin:$task-$kind" --data "$work/$task.jsonl" --out "$work/$task-$kind-greedy" --device cpu \
        --analyses pruning --order greedy --no-plots
  done
  for order in importance greedy; do
    suffix=""
    [ "$order" = greedy ] && suffix=-greedy
    "$cli" corpus-plot "$work/$task-dot$suffix" "$work/$task-additive$suffix" "$work/$task-linear$suffix" \
        --names dot,additive,linear --out "$here/$task-pruning$suffix.pdf"
    "$cli" corpus-plot "$work/$task-dot$suffix" "$work/$task-additive$suffix" "$work/$task-linear$suffix" \
        --names dot,additive,linear --out "$here/$task-pruning$suffix.png"
  done
done
