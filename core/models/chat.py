"""A model's own chat template, rendered: the prompt an instruction-tuned GGUF expects for one user turn.

A GGUF made from an instruct model carries its chat template (``tokenizer.chat_template``, a Jinja template written
for Hugging Face's tokenizers). llama-cpp-python renders such templates for its chat completions
(``llama_cpp.llama_chat_format.Jinja2ChatFormatter``: a sandboxed Jinja environment with the helpers templates
call, ``raise_exception``, ``strftime_now``, ``tojson``); :func:`render_user_turn` renders one user message with it
and the opening of the model's answer (``add_generation_prompt``), so a model the user brings is prompted as it was
trained, whatever its family.
"""

from __future__ import annotations


def render_user_turn(template: str, user: str, *, bos: str = "", eos: str = "") -> str:
    """``user`` as the one user message of ``template``, ending where the model's answer begins. ``bos``/``eos``
    are the texts the template may write for its BOS/EOS tokens. ValueError when the template does not render (a
    syntax error, a template that raises for this conversation, one that renders nothing)."""
    import jinja2
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    try:
        formatter = Jinja2ChatFormatter(template, eos_token=eos, bos_token=bos, add_generation_prompt=True)
        prompt = formatter(messages=[{"role": "user", "content": user}]).prompt
    except (jinja2.TemplateError, ValueError, TypeError, KeyError, IndexError, AttributeError) as exc:
        raise ValueError(f"{type(exc).__name__}: {exc}") from exc
    if user.strip() not in prompt:
        raise ValueError("the rendered prompt does not hold the user's message")
    return prompt
