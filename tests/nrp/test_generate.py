"""Answer generation for NRP studies: templates, a tiny random GPT-2 built on disk (no download) and a fake
OpenAI-compatible server on the loopback interface (retry on 429, 401 message)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from typer.testing import CliRunner

from stableval.cli import app
from stableval.errors import InputError
from stableval.nrp.generate import (
    TEMPLATES,
    EndpointGenerator,
    GenerationError,
    SamplingSettings,
    build_prompt,
    generate_answers,
    read_queries,
)

from nrp_data import QUERIES
from tiny_models import TRANSFORMERS_MISSING


def test_templates_are_the_papers_four() -> None:
    # Heineking et al. 2024, "Generating Responses": No Prompt, Short QA, Long QA, MultiMedQA
    assert list(TEMPLATES) == ["none", "short-qa", "long-qa", "multimedqa"]
    assert build_prompt("none", " flu? ") == "flu?"
    assert build_prompt("long-qa", "flu?") == "Question: flu? Answer:"
    assert build_prompt("multimedqa", "flu?").startswith("You are a helpful medical knowledge assistant.")
    assert build_prompt("multimedqa", "flu?").endswith("Question: flu? Complete Answer:")
    with pytest.raises(InputError, match=r"unknown prompt template.*allowed: none, short-qa"):
        build_prompt("cot", "flu?")


def test_sampling_settings_are_checked() -> None:
    assert SamplingSettings() == SamplingSettings(0.75, 0.95, 50, 1.2, 512, 0)  # the paper's settings
    with pytest.raises(InputError, match=r"option 'top_p'.*got 1\.5.*in \(0, 1\]"):
        SamplingSettings(top_p=1.5)
    usage = CliRunner().invoke(app, ["nrp", "generate", "q.csv", "-o", "a.csv", "-m", "m", "--top-p", "0"])
    assert usage.exit_code == 2 and "--top-p" in usage.output and "(0, 1]" in usage.output


def test_read_queries_accepts_query_and_names_bad_rows(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text('{"qid": "1", "query": "flu?"}\n{"qid": "2", "query": "cold?"}\n')
    assert read_queries(path).to_dict("records") == [{"qid": "1", "question": "flu?"},
                                                      {"qid": "2", "question": "cold?"}]
    bad = tmp_path / "bad.csv"
    bad.write_text("qid,question\n1,flu?\n1,cold?\n")
    with pytest.raises(InputError, match=r"bad\.csv, row 2, column 'qid': duplicate qid"):
        read_queries(bad)


@pytest.mark.slow
def test_local_model_samples_are_recorded_and_reproducible(tiny_gpt2: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from stableval.nrp.generate import TransformersGenerator

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    generator = TransformersGenerator(tiny_gpt2, name="tiny")
    settings = SamplingSettings(max_new_tokens=6, seed=3)
    table = generate_answers(QUERIES, generator, templates=["short-qa", "multimedqa"], n=3, settings=settings)
    assert len(table) == 2 * 2 * 3
    assert table["answer_id"].is_unique and set(table["model"]) == {"tiny"}
    assert list(table.loc[:2, "answer_id"]) == ["q1:tiny:short-qa:1", "q1:tiny:short-qa:2", "q1:tiny:short-qa:3"]
    assert (table[["temperature", "top_p", "top_k", "repetition_penalty", "max_new_tokens", "seed"]]
            == [0.75, 0.95, 50, 1.2, 6, 3]).all().all()
    assert table["params"].iloc[0] == sum(p.numel() for p in generator.model.parameters())
    # each answer is the continuation only (never the prompt), at most 6 tokens of the vocabulary
    assert table["text"].str.len().gt(0).all()
    assert not table["text"].str.contains("Question:").any()
    assert table["text"].str.split().str.len().le(6).all()
    again = generate_answers(QUERIES.iloc[::-1], generator, templates=["short-qa", "multimedqa"], n=3,
                             settings=settings)
    assert again.set_index("answer_id")["text"].to_dict() == table.set_index("answer_id")["text"].to_dict()
    other = generate_answers(QUERIES, generator, templates=["short-qa"], n=3, settings=SamplingSettings(
        max_new_tokens=6, seed=4))
    assert list(other["text"]) != list(table.loc[table["prompt"] == "short-qa", "text"])
    greedy = generate_answers(QUERIES, generator, templates=["none"], n=2, settings=SamplingSettings(
        temperature=0, max_new_tokens=6))
    assert greedy["text"].iloc[0] == greedy["text"].iloc[1] and (greedy["temperature"] == 0).all()


def test_missing_model_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("transformers", reason=TRANSFORMERS_MISSING)
    from stableval.nrp.generate import TransformersGenerator

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(GenerationError, match=r"cannot load the model .*save_pretrained"):
        TransformersGenerator(tmp_path / "nothing-here")


def _cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


@pytest.mark.skipif(_cuda(), reason="a CUDA GPU is here: test_local_model_on_cuda runs instead")
def test_cuda_without_a_gpu_is_a_clear_error(tiny_gpt2: Path, tmp_path: Path) -> None:
    queries = tmp_path / "q.csv"
    QUERIES.to_csv(queries, index=False)
    result = CliRunner().invoke(app, ["nrp", "generate", str(queries), "-o", str(tmp_path / "a.csv"), "--model",
                                      str(tiny_gpt2), "--device", "cuda"])
    assert result.exit_code == 1 and "--device" in result.output and "cannot use this torch device" in result.output


@pytest.mark.skipif(not _cuda(), reason="no CUDA GPU on this machine (or torch not installed)")
def test_local_model_on_cuda(tiny_gpt2: Path) -> None:
    from stableval.nrp.generate import TransformersGenerator

    generator = TransformersGenerator(tiny_gpt2, device="cuda")
    table = generate_answers(QUERIES, generator, templates=["none"], n=2, settings=SamplingSettings(max_new_tokens=4))
    assert len(table) == 4


# ====================================================================================== endpoint
class FakeChat(BaseHTTPRequestHandler):
    """``/ok``: n choices; ``/one``: one choice whatever n; ``/busy``: 429 once, then like ``/ok``; ``/denied``:
    401 with an OpenAI-style error."""

    calls: ClassVar[list[tuple[str, dict[str, Any], str | None]]] = []
    busy_left = 1

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        FakeChat.calls.append((self.path, body, self.headers.get("Authorization")))
        if self.path.startswith("/denied"):
            self._send(401, {"error": {"message": "Incorrect API key provided: sk-bad"}})
            return
        if self.path.startswith("/busy") and FakeChat.busy_left:
            FakeChat.busy_left -= 1
            self._send(429, {"error": {"message": "Rate limit reached"}}, {"Retry-After": "0"})
            return
        count = 1 if self.path.startswith("/one") else body["n"]
        prompt = body["messages"][0]["content"]
        self._send(200, {"choices": [{"index": i, "message": {"role": "assistant", "content": f"{prompt[-12:]}|{i}"}}
                                     for i in range(count)]})


@pytest.fixture()
def server() -> Iterator[str]:
    FakeChat.calls, FakeChat.busy_left = [], 1
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), FakeChat)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_endpoint_sends_the_settings_and_records_them(server: str) -> None:
    pytest.importorskip("httpx")
    generator = EndpointGenerator(f"{server}/ok/v1", "gpt-3.5-turbo-0613", api_key="sk-test", name="chatgpt")
    table = generate_answers(QUERIES, generator, templates=["long-qa"], n=3,
                             settings=SamplingSettings(temperature=0.5, max_new_tokens=64, seed=7))
    path, body, auth = FakeChat.calls[0]
    assert path == "/ok/v1/chat/completions" and auth == "Bearer sk-test"
    assert body == {"model": "gpt-3.5-turbo-0613", "messages": [{"role": "user", "content":
                    "Question: Can diabetes be cured? Answer:"}], "temperature": 0.5, "top_p": 0.95,
                    "max_tokens": 64, "seed": 7, "n": 3}
    assert len(FakeChat.calls) == 2  # one request per query
    assert list(table["text"][:3]) == ["red? Answer:|0", "red? Answer:|1", "red? Answer:|2"]
    assert set(table["model"]) == {"chatgpt"} and table["top_k"].isna().all()
    assert (table["temperature"] == 0.5).all() and (table["backend"] == "openai-chat").all()


def test_endpoint_asks_again_when_a_server_ignores_n(server: str) -> None:
    pytest.importorskip("httpx")
    generator = EndpointGenerator(f"{server}/one/v1/chat/completions", "m", api_key="")
    assert len(generator.sample("hi", 3, SamplingSettings())) == 3
    assert [body["n"] for _, body, _ in FakeChat.calls] == [3, 2, 1]


def test_endpoint_retries_429_then_succeeds(server: str) -> None:
    pytest.importorskip("httpx")
    generator = EndpointGenerator(f"{server}/busy/v1", "m", backoff=0.01)
    assert generator.sample("hi", 2, SamplingSettings()) == ["hi|0", "hi|1"]
    assert [p for p, _, _ in FakeChat.calls] == ["/busy/v1/chat/completions"] * 2
    FakeChat.busy_left = 5
    with pytest.raises(GenerationError, match=r"HTTP 429 \(Rate limit reached\) after 3 tries"):
        EndpointGenerator(f"{server}/busy/v1", "m", backoff=0.01, max_retries=2).sample("hi", 1, SamplingSettings())


def test_endpoint_401_says_to_set_the_key(server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("httpx")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(GenerationError, match=r"HTTP 401, the API key was refused \(Incorrect API key provided: "
                                              r"sk-bad\); set OPENAI_API_KEY to a valid key \(it is not set\)"):
        EndpointGenerator(f"{server}/denied/v1", "m").sample("hi", 1, SamplingSettings())
    queries = tmp_path / "q.csv"
    QUERIES.to_csv(queries, index=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-bad")
    result = CliRunner().invoke(app, ["nrp", "generate", str(queries), "-o", str(tmp_path / "a.csv"), "--endpoint",
                                      f"{server}/denied/v1", "--model", "m"])
    assert result.exit_code == 1 and "the API key was refused" in result.output
    assert FakeChat.calls[-1][2] == "Bearer sk-bad"
    assert not (tmp_path / "a.csv").exists()
