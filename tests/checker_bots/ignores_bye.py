#!/usr/bin/env python3
"""Plays well but does not exit on bye: it reads on until the end of input. Fails: bye."""
from _common import main

main(exit_on_bye=False)
