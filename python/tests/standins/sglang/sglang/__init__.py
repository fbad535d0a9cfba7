"""A stand-in for SGLang's function-call parser interface, written for
toolgate's tests.

SGLang needs torch and a GPU and cannot be installed on CI. This package
reproduces only the names, signatures and behaviour toolgate's detector
relies on, as published by SGLang at commit
00828e568a0030e197c825dfa20f5a180b143d04
(`python/sglang/srt/function_call/function_call_parser.py`,
`base_format_detector.py`, `core_types.py`,
`python/sglang/srt/entrypoints/openai/protocol.py`). It is not SGLang's
code.
"""

__version__ = "0.0.0+standin.00828e5"
