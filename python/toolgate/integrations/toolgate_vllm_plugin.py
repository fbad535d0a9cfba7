"""The file for vLLM's ``--tool-parser-plugin``: registers toolgate's tool
parsers (``toolgate_auto``, ``toolgate_<profile or mode>``). vLLM imports
it under its file stem, so the stem must not be ``vllm``."""

from toolgate.integrations.vllm import register

REGISTERED = register()
