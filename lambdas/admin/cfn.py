"""CloudFormation custom resource protocol: the response PUT to the pre-signed ResponseURL."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Callable
from contextlib import AbstractContextManager
from http.client import HTTPResponse


def send(
    event: dict,
    status: str,
    physical_id: str,
    reason: str = "",
    data: dict | None = None,
    opener: Callable[..., AbstractContextManager[HTTPResponse]] = urllib.request.urlopen,
) -> None:
    """Answer CloudFormation for `event` with SUCCESS or FAILED; `reason` is shown in the stack events."""
    body = json.dumps(
        {
            "Status": status,
            "Reason": reason[:3000] or status,
            "PhysicalResourceId": physical_id,
            "StackId": event["StackId"],
            "RequestId": event["RequestId"],
            "LogicalResourceId": event["LogicalResourceId"],
            "NoEcho": False,
            "Data": data or {},
        }
    ).encode()
    request = urllib.request.Request(
        event["ResponseURL"], data=body, method="PUT", headers={"Content-Type": "", "Content-Length": str(len(body))}
    )
    with opener(request, timeout=30) as response:
        response.read()
