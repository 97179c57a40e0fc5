"""Pairs per second of a MiniLM-L6-shaped cross-encoder: the former per-batch path against the length-bucketed one.

Builds the model itself (no download; ``HF_HUB_OFFLINE=1`` is set): a BERT of the shape of
``cross-encoder/ms-marco-MiniLM-L-6-v2`` (6 layers, hidden 384, 12 heads, intermediate 1,536, vocabulary 30,522,
512 positions, one label) with random weights, and a word-level tokenizer over the same vocabulary (one token per
word). Texts: queries of 12 words, documents with LiveQA-like lengths (log-normal, median 126 words, 90th
percentile ~520: the merged LiveQA pool has median 126, mean 234, 90th percentile 557), truncated to 512 tokens.

Paths, timed one after the other in this process on the same pairs (after a warm-up each):

* ``old``: the former ``CrossEncoderRanker.score_pairs``: pairs in input order, one tokenizer call per batch
  padded to its longest pair, fp32, the logits copied back to the host after every batch;
* ``new``: ``CrossEncoderRanker.score`` as NRP calls it (per question, documents scored together): one tokenizer
  call per bucket of ``batch_size x 32`` pairs, batches cut from the pairs sorted by length, one transfer back per
  bucket, and the precision ``--precision`` chooses (``auto``: fp32 on a CPU; fp16 autocast on CUDA with
  near-ties re-scored in fp32);
* ``new-fp32`` (CUDA only): the new path forced to fp32, to separate bucketing from half precision.

Each path's scores are checked against the old path's: the smallest Kendall tau over questions and the largest
absolute difference are printed. The machine load (``os.getloadavg``) is printed before and after.

    python benchmarks/bench_neural.py [--questions 10] [--docs 32] [--batch-size 32] [--device cpu,cuda]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

VOCAB = 30_522
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def build_model(directory: Path) -> Path:
    """A randomly initialised MiniLM-L6-shaped cross-encoder and its word-level tokenizer, saved in ``directory``."""
    import torch
    import transformers
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    vocab = {token: i for i, token in enumerate([*SPECIAL, *(f"w{i}" for i in range(VOCAB - len(SPECIAL)))])}
    core = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    core.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B [SEP]",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])])
    transformers.PreTrainedTokenizerFast(tokenizer_object=core, pad_token="[PAD]", unk_token="[UNK]",
                                         cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]",
                                         model_max_length=512).save_pretrained(directory)
    torch.manual_seed(0)
    config = transformers.BertConfig(vocab_size=VOCAB, hidden_size=384, num_hidden_layers=6, num_attention_heads=12,
                                     intermediate_size=1536, max_position_embeddings=512, num_labels=1)
    transformers.BertForSequenceClassification(config).save_pretrained(directory)
    return directory


def texts(questions: int, docs: int, seed: int = 0) -> tuple[list[str], list[list[str]]]:
    """Queries of 12 words and, per query, documents with LiveQA-like lengths (Zipf-distributed words)."""
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, VOCAB - len(SPECIAL) + 1)
    p /= p.sum()

    def text(n: int) -> str:
        return " ".join(f"w{i}" for i in rng.choice(len(p), n, p=p))

    lengths = np.clip(np.round(rng.lognormal(np.log(126), 1.1, (questions, docs))), 5, 2000).astype(int)
    return [text(12) for _ in range(questions)], [[text(n) for n in row] for row in lengths]


def old_path(model, tokenizer, queries: list[str], documents: list[list[str]], *, device: str, batch_size: int,
             max_length: int) -> list[np.ndarray]:
    """The former score_pairs: input order, a tokenizer call and a host copy per batch, fp32."""
    import torch

    pair_q = [q for q, docs in zip(queries, documents, strict=True) for _ in docs]
    pair_t = [t for docs in documents for t in docs]
    out = []
    with torch.inference_mode():
        for start in range(0, len(pair_t), batch_size):
            batch = tokenizer(pair_q[start:start + batch_size], pair_t[start:start + batch_size], padding=True,
                              truncation="only_second", max_length=max_length, return_tensors="pt")
            logits = model(**{k: v.to(device) for k, v in batch.items()}).logits.float()
            out.append(logits[:, 0].cpu().numpy())
    flat = np.concatenate(out)
    bounds = np.cumsum([0, *(len(docs) for docs in documents)])
    return [flat[bounds[i]:bounds[i + 1]] for i in range(len(documents))]


def timed(run, sync) -> tuple[float, list[np.ndarray]]:
    sync()
    start = time.perf_counter()
    result = run()
    sync()
    return time.perf_counter() - start, result


def agreement(a: list[np.ndarray], b: list[np.ndarray]) -> tuple[float, float]:
    """Smallest Kendall tau over questions and the largest absolute score difference."""
    from scipy import stats

    taus = [float(stats.kendalltau(x, y).statistic) for x, y in zip(a, b, strict=True)]
    return min(taus), float(max(np.abs(x - y).max() for x, y in zip(a, b, strict=True)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=10)
    parser.add_argument("--docs", type=int, default=32, help="documents per question")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--max-length", type=int, default=512)
    parser.add_argument("--device", default=None, help="comma-separated; default: cpu, and cuda when there")
    args = parser.parse_args()

    import torch

    from stableval.nrp.rankers import make_ranker
    from stableval.nrp.rankers.inference import precision_name

    devices = args.device.split(",") if args.device else ["cpu", *(["cuda"] if torch.cuda.is_available() else [])]
    queries, documents = texts(args.questions, args.docs)
    pairs = args.questions * args.docs
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; torch {torch.__version__}, "
          f"{torch.get_num_threads()} CPU threads; {pairs} pairs ({args.questions} questions x {args.docs} documents), "
          f"batch size {args.batch_size}, max length {args.max_length}")
    with tempfile.TemporaryDirectory() as folder:
        directory = build_model(Path(folder))
        rows = []
        for device in devices:
            def sync(device: str = device) -> None:
                if device.startswith("cuda"):
                    torch.cuda.synchronize()

            settings = {"model_path": directory, "device": device, "batch_size": args.batch_size,
                        "max_length": args.max_length}
            runs = {"new": make_ranker("cross-encoder", **settings)}
            if device.startswith("cuda"):
                runs["new-fp32"] = make_ranker("cross-encoder", **settings, precision="fp32")
            model, tokenizer = runs["new"]._load()
            warm_q, warm_d = queries[:1], [documents[0][:args.batch_size]]
            old_path(model, tokenizer, warm_q, warm_d, device=device, batch_size=args.batch_size,
                     max_length=args.max_length)
            seconds, reference = timed(lambda model=model, tokenizer=tokenizer, device=device: old_path(
                model, tokenizer, queries, documents, device=device, batch_size=args.batch_size,
                max_length=args.max_length), sync)
            rows.append((device, "old (fp32)", seconds, pairs / seconds, 1.0, 1.0, 0.0))
            for name, ranker in runs.items():
                ranker.score(warm_q, warm_d)  # warm-up (and, in half precision, the error sample)
                ranker.cache = type(ranker.cache)()  # nothing cached from the warm-up
                spent, (scores, _) = timed(lambda ranker=ranker: ranker.score(queries, documents), sync)
                tau, gap = agreement(reference, scores)
                runs_in = precision_name(ranker.device, ranker.precision, half=ranker.half)
                rows.append((device, f"{name} ({runs_in})", spent, pairs / spent, seconds / spent, tau, gap))
    print(f"{'device':<8}{'path':<30}{'seconds':>9}{'pairs/s':>10}{'speed-up':>10}{'min tau':>9}{'max |diff|':>12}")
    for device, name, spent, rate, gain, tau, gap in rows:
        print(f"{device:<8}{name:<30}{spent:>9.2f}{rate:>10.1f}{gain:>9.2f}x{tau:>9.4f}{gap:>12.2e}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
