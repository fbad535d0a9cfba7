"""toolgate in the stacks that serve and route models: vLLM
(:mod:`.vllm`), SGLang (:mod:`.sglang`), LiteLLM (:mod:`.litellm`), and Ray
Data for relabeling at scale (:mod:`.ray`)."""
