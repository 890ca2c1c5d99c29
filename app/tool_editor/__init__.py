"""The tool editor tab: tool fields, the parameter builder and the prompt-template editor.

``tool_editor.ToolEditor`` is the tab; the parameter builder is ``parameter_model``,
``property_panel``, ``schema_json_view`` and ``schema_import``; the template editor is
``template_pane`` and the modules it uses. Import the submodules directly.
"""
