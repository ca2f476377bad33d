"""``audio.live.serve_calls``: one loopback server answering several calls at once, and the caller's scenario hint.

No speech models: each "call" here is a coroutine that holds its connection until told to end, so the server's
admission (Origin, the concurrency limit, stopping) is checked on its own.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from audio.live import OriginPolicy, scenario_hint_of, serve_calls, with_scenario_hint


def test_the_scenario_hint_rides_on_the_url_query() -> None:
    assert with_scenario_hint("ws://127.0.0.1:8766", None) == "ws://127.0.0.1:8766"
    url = with_scenario_hint("ws://127.0.0.1:8766/v1/realtime?model=m", "acs_chest_pain")
    assert url == "ws://127.0.0.1:8766/v1/realtime?model=m&encsim_scenario=acs_chest_pain"
    assert scenario_hint_of("/v1/realtime?model=m&encsim_scenario=acs_chest_pain") == "acs_chest_pain"
    assert scenario_hint_of("/?model=m") is None and scenario_hint_of("") is None


async def test_calls_beyond_the_limit_get_busy_and_a_foreign_origin_gets_403() -> None:
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    stop, release = asyncio.Event(), asyncio.Event()
    paths: list[str] = []
    log: list[str] = []

    async def call(websocket: Any) -> None:
        paths.append(websocket.request.path)
        await websocket.send("answered")
        await release.wait()

    server = asyncio.create_task(serve_calls(host="127.0.0.1", port=0, policy=OriginPolicy(), log=log.append,
                                             call=call, concurrency=2, stop=stop, on_ready=ready.set_result))
    url = await asyncio.wait_for(ready, 30)
    try:
        async with connect(f"{url}/a?encsim_scenario=one") as first, connect(f"{url}/b") as second:
            assert await first.recv() == "answered" and await second.recv() == "answered"
            with pytest.raises(InvalidStatus) as busy:
                async with connect(url):
                    pass
            assert busy.value.response.status_code == 503
            assert any("2 call(s) already in progress" in line for line in log)
            with pytest.raises(InvalidStatus) as foreign:
                async with connect(url, origin="https://evil.example"):  # type: ignore[arg-type]
                    pass
            assert foreign.value.response.status_code == 403
            release.set()
        assert sorted(paths) == ["/a?encsim_scenario=one", "/b"]
        async with connect(url) as third:  # the calls ended: there is room again
            assert await third.recv() == "answered"
        stop.set()
    finally:
        release.set()
        stop.set()
        await asyncio.wait_for(server, 30)
    with pytest.raises(OSError):  # the server stopped listening when it was told to stop
        async with connect(url, open_timeout=5):
            pass


async def test_stopping_waits_for_the_calls_in_progress() -> None:
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    stop, release = asyncio.Event(), asyncio.Event()
    ended: list[str] = []

    async def call(websocket: Any) -> None:
        await websocket.send("answered")
        await release.wait()
        ended.append("call")

    server = asyncio.create_task(serve_calls(host="127.0.0.1", port=0, policy=OriginPolicy(), log=lambda _m: None,
                                             call=call, concurrency=1, stop=stop, on_ready=ready.set_result))
    url = await asyncio.wait_for(ready, 30)
    async with connect(url) as ws:
        assert await ws.recv() == "answered"
        stop.set()
        await asyncio.sleep(0.2)
        assert not server.done() and ended == []  # stopped taking calls, still serving this one
        release.set()
        await asyncio.wait_for(server, 30)
    assert ended == ["call"]
