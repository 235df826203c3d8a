"""Adapters to the frameworks agents are built with: each turns a :class:`~agent_tool_result.
Reading` into what its framework's tool protocol expects (``pydantic_ai``, ``langchain``,
``openai_agents``). Each imports its framework only when used."""
