"""Resources, resource templates, prompts and completions: what `Surfaces` serves, template
URIs matched, file paths kept inside their base, resource subscriptions checked."""
