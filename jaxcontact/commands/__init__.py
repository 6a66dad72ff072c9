"""Sub-commands of the ``jaxcontact`` CLI (see ``jaxcontact.cli``)."""
