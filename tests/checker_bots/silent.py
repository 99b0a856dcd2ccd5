#!/usr/bin/env python3
"""Answers hello, then never answers a request. Fails: in-time (and every game check)."""
from _common import main

main(answer=lambda msg: None)
