"""`mcpgen diff` beyond tools: resources, resource templates and prompts (issue 22), and skills (issue 37).

Judged like tools (diff/compare.py), once for a client (it reads resources, expands templates and
gets prompts through generated methods) and once for a server (it serves them):

    resource removed / template removed / prompt removed     breaking for clients
    resource, template or prompt added                       breaking for servers (to be served)
    template's uriTemplate changed (same name)               breaking for both: other URIs, other
                                                             parameters
    template or prompt renamed (same uriTemplate / same      breaking for both: the generated method
      arguments)                                             has another name
    prompt argument added as required, or made required     breaking for clients (calls lack it)
    prompt argument added as optional, or made optional     breaking for servers (must accept it)
    prompt argument removed                                  breaking for clients (calls send it)
    resource's mimeType changed                              possibly breaking for clients
    title, description, annotations, icons, _meta            cosmetic
    skill removed                                            breaking for clients (loading it fails)
    skill added                                              compatible (servers serve a folder: nothing
                                                             is generated for it)
    skill's frontmatter or files changed (digests, sizes,    possibly breaking for clients: what a user
      files added or removed, `dynamic`)                     approved from the entry is not what is served

Entries are identified by URI (resources; skills, by their SKILL.md) and by name (templates,
prompts); `Change.tool` names the entry ("prompt 'code_review'"), `Change.pointer` points inside it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..spec import LoadedSpec
from .compare import Change, DiffReport, Severity, diff_tools

__all__ = ["diff_specs", "diff_surfaces"]


def _by(entries: Iterable[Mapping[str, Any]], key: str) -> dict[str, Mapping[str, Any]]:
    found: dict[str, Mapping[str, Any]] = {}
    for entry in entries:
        value = entry.get(key) if isinstance(entry, Mapping) else None
        if isinstance(value, str) and value not in found:
            found[value] = entry
    return found


def _cosmetic(label: str, old: Mapping[str, Any], new: Mapping[str, Any], skip: set[str]) -> list[Change]:
    changes = []
    for member in sorted((set(old) | set(new)) - skip):
        if old.get(member) != new.get(member):
            changes.append(
                Change(
                    label, f"/{member}", f"{member}-changed", "cosmetic", "cosmetic", f"`{member}` changed"
                )
            )
    return changes


def _gone_and_new(
    noun: str, kind: str, removed: Iterable[str], added: Iterable[str], shown: Callable[[str], str] = repr
) -> list[Change]:
    """`{kind}-removed` (breaking for clients) for each of `removed`, then `{kind}-added` (breaking for
    servers: to be served) for each of `added`; an entry is labelled `{noun} {key!r}`."""
    return [
        Change(
            f"{noun} {key!r}", "", f"{kind}-removed", "breaking", "compatible", f"{noun} {shown(key)} removed"
        )
        for key in removed
    ] + [
        Change(f"{noun} {key!r}", "", f"{kind}-added", "compatible", "breaking", f"{noun} {shown(key)} added")
        for key in added
    ]


def _member_changed(
    label: str,
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    member: str,
    kind: str,
    client: Severity,
    server: Severity,
    why: str = "",
) -> list[Change]:
    """`kind` when `member` differs from `old` to `new` (shown old -> new, then `why`), else nothing."""
    before, after = old.get(member), new.get(member)
    if before == after:
        return []
    return [Change(label, f"/{member}", kind, client, server, f"{member} {before!r} -> {after!r}{why}")]


def _resources(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[Change]:
    before, after = _by(old, "uri"), _by(new, "uri")
    changes = _gone_and_new(
        "resource",
        "resource",
        sorted(set(before) - set(after)),
        sorted(set(after) - set(before)),
        shown=lambda uri: f"`{uri}`",
    )
    for uri in sorted(set(before) & set(after)):
        a, b = before[uri], after[uri]
        label = f"resource {uri!r}"
        changes += _member_changed(
            label, a, b, "mimeType", "resource-mime-type-changed", "possibly-breaking", "possibly-breaking"
        )
        changes += _member_changed(
            label,
            a,
            b,
            "name",
            "resource-renamed",
            "possibly-breaking",
            "compatible",
            " (the generated Resources constant follows it)",
        )
        changes += _cosmetic(label, a, b, {"uri", "name", "mimeType"})
    return changes


def _templates(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[Change]:
    before, after = _by(old, "name"), _by(new, "name")
    removed, added = sorted(set(before) - set(after)), sorted(set(after) - set(before))
    changes: list[Change] = []
    for old_name in list(removed):
        same = [n for n in added if after[n].get("uriTemplate") == before[old_name].get("uriTemplate")]
        if same:
            removed.remove(old_name)
            added.remove(same[0])
            changes.append(
                Change(
                    f"resource template {old_name!r}",
                    "/name",
                    "template-renamed",
                    "breaking",
                    "breaking",
                    f"resource template {old_name!r} renamed to {same[0]!r} (same uriTemplate): "
                    "its generated method is renamed",
                )
            )
    changes += _gone_and_new("resource template", "template", removed, added)
    for name in sorted(set(before) & set(after)):
        a, b = before[name], after[name]
        label = f"resource template {name!r}"
        changes += _member_changed(label, a, b, "uriTemplate", "template-uri-changed", "breaking", "breaking")
        changes += _cosmetic(label, a, b, {"name", "uriTemplate"})
    return changes


def _arguments(prompt: Mapping[str, Any]) -> dict[str, bool]:
    arguments = prompt.get("arguments")
    found: dict[str, bool] = {}
    for argument in arguments if isinstance(arguments, list) else ():
        if isinstance(argument, Mapping) and isinstance(argument.get("name"), str):
            found.setdefault(argument["name"], argument.get("required") is True)
    return found


def _described(prompt: Mapping[str, Any]) -> dict[str, Any]:
    arguments = prompt.get("arguments")
    return {
        a["name"]: (a.get("description"), a.get("title"))
        for a in (arguments if isinstance(arguments, list) else ())
        if isinstance(a, Mapping) and isinstance(a.get("name"), str)
    }


def _prompts(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[Change]:
    before, after = _by(old, "name"), _by(new, "name")
    changes = _gone_and_new(
        "prompt", "prompt", sorted(set(before) - set(after)), sorted(set(after) - set(before))
    )
    for name in sorted(set(before) & set(after)):
        a, b = _arguments(before[name]), _arguments(after[name])
        label = f"prompt {name!r}"
        for arg in sorted(set(a) - set(b)):
            changes.append(
                Change(
                    label,
                    "/arguments",
                    "argument-removed",
                    "breaking",
                    "compatible",
                    f"argument {arg!r} removed",
                )
            )
        for arg in sorted(set(b) - set(a)):
            if b[arg]:
                changes.append(
                    Change(
                        label,
                        "/arguments",
                        "argument-added-required",
                        "breaking",
                        "compatible",
                        f"required argument {arg!r} added",
                    )
                )
            else:
                changes.append(
                    Change(
                        label,
                        "/arguments",
                        "argument-added-optional",
                        "compatible",
                        "breaking",
                        f"optional argument {arg!r} added",
                    )
                )
        for arg in sorted(set(a) & set(b)):
            if a[arg] != b[arg]:
                now = "required" if b[arg] else "optional"
                changes.append(
                    Change(
                        label,
                        "/arguments",
                        f"argument-made-{now}",
                        "breaking" if b[arg] else "compatible",
                        "compatible" if b[arg] else "breaking",
                        f"argument {arg!r} is {now} now",
                    )
                )
        old_text, new_text = _described(before[name]), _described(after[name])
        if any(old_text[arg] != new_text[arg] for arg in set(old_text) & set(new_text)):
            changes.append(
                Change(
                    label,
                    "/arguments",
                    "argument-described",
                    "cosmetic",
                    "cosmetic",
                    "argument descriptions changed",
                )
            )
        changes += _cosmetic(label, before[name], after[name], {"name", "arguments"})
    return changes


def _files(skill: Mapping[str, Any]) -> dict[str, tuple[Any, Any]] | None:
    """A skill entry's files: URI -> (digest, size); None for `"dynamic"` (or no list)."""
    resources = skill.get("resources")
    if not isinstance(resources, list):
        return None
    return {
        item["uri"]: (item.get("digest"), item.get("size"))
        for item in resources
        if isinstance(item, Mapping) and isinstance(item.get("uri"), str)
    }


MAX_NAMED_FILES = 10  # files a skill change names (the rest are counted)


def _files_changed(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    """Which files were added, removed or changed (by name, at most MAX_NAMED_FILES)."""
    touched = sorted(uri for uri in set(old) | set(new) if old.get(uri) != new.get(uri))
    named = []
    for uri in touched[:MAX_NAMED_FILES]:
        how = "added" if uri not in old else "removed" if uri not in new else "changed"
        named.append(f"{uri.rpartition('/')[2][:80]} ({how})")
    more = f" and {len(touched) - MAX_NAMED_FILES} more" if len(touched) > MAX_NAMED_FILES else ""
    return ", ".join(named) + more


def _skills(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[Change]:
    before, after = _by(old, "uri"), _by(new, "uri")
    changes = [
        Change(f"skill {uri!r}", "", "skill-removed", "breaking", "compatible", f"skill `{uri}` removed")
        for uri in sorted(set(before) - set(after))
    ] + [
        Change(f"skill {uri!r}", "", "skill-added", "compatible", "compatible", f"skill `{uri}` added")
        for uri in sorted(set(after) - set(before))
    ]
    for uri in sorted(set(before) & set(after)):
        a, b = before[uri], after[uri]
        label = f"skill {uri!r}"
        front_a, front_b = a.get("frontmatter"), b.get("frontmatter")
        if front_a != front_b:
            fields = (
                sorted(
                    key
                    for key in set(front_a or {}) | set(front_b or {})
                    if (front_a or {}).get(key) != (front_b or {}).get(key)
                )
                if isinstance(front_a, Mapping) and isinstance(front_b, Mapping)
                else ["frontmatter"]
            )
            changes.append(
                Change(
                    label,
                    "/frontmatter",
                    "skill-frontmatter-changed",
                    "possibly-breaking",
                    "compatible",
                    f"frontmatter changed: {', '.join(fields)[:200]}",
                )
            )
        files_a, files_b = _files(a), _files(b)
        if files_a == files_b:
            continue
        if files_a is None or files_b is None:
            what = (
                "its files are now generated (`dynamic`)" if files_b is None else "its files are now listed"
            )
        else:
            what = "files: " + _files_changed(files_a, files_b)
        changes.append(
            Change(label, "/resources", "skill-files-changed", "possibly-breaking", "compatible", what)
        )
    return changes


def diff_surfaces(old: LoadedSpec, new: LoadedSpec) -> list[Change]:
    """Every change to the resources, resource templates, prompts and skills from `old` to `new`."""
    return [
        *_resources(old.resources, new.resources),
        *_templates(old.resource_templates, new.resource_templates),
        *_prompts(old.prompts, new.prompts),
        *_skills(old.skills, new.skills),
    ]


def diff_specs(old: LoadedSpec, new: LoadedSpec) -> DiffReport:
    """`diff_tools` of the tools, plus the resources, templates and prompts."""
    report = diff_tools(old.tools, new.tools, old_source=old.source, new_source=new.source)
    extra = diff_surfaces(old, new)
    if not extra:
        return report
    return DiffReport(report.old_source, report.new_source, (*report.changes, *extra))
