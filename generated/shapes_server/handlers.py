# Created by mcpgen 0.1.0 from specs/shapes.json (sha256 cc347e1f4d013f6f36e5e886ede4af8995a64e76a1e5d43ed59777273caefdaa).
# This file is yours: mcpgen writes it once and never overwrites it. Regenerating updates base.py only.
"""Tool handlers: override each method, then serve with
`python -m shapes_server --http --port 8000` or `python -m shapes_server --stdio`.

Return the output model (or its root value) for tools with an outputSchema; otherwise a str,
a content block, a list of blocks or a ToolResult. Raise ToolExecutionError for a tool error.
"""

from mcpgen_runtime.server import ToolContext, ToolReturn

from . import models as _m
from .base import ServerBase


class Server(ServerBase):
    """Your tool implementations. Methods you do not override answer "not implemented"."""

    async def no_args(self, args: _m.NoArgsInput, ctx: ToolContext) -> ToolReturn:
        """A tool without parameters (TOOLS-09)."""
        raise NotImplementedError

    async def no_args_open(self, args: _m.NoArgsOpenInput, ctx: ToolContext) -> ToolReturn:
        """A tool whose input schema is just an object."""
        raise NotImplementedError

    async def nested_objects(self, args: _m.NestedObjectsInput, ctx: ToolContext) -> _m.NestedObjectsOutput:
        """Objects inside objects."""
        raise NotImplementedError

    async def array_of_objects(
        self,
        args: _m.ArrayOfObjectsInput,
        ctx: ToolContext,
    ) -> list[_m.ArrayOfObjectsOutputItem]:
        """Arrays whose items are objects; the output is an array."""
        raise NotImplementedError

    async def enums(self, args: _m.EnumsInput, ctx: ToolContext) -> ToolReturn:
        """String, integer, mixed and nullable enums."""
        raise NotImplementedError

    async def consts(self, args: _m.ConstsInput, ctx: ToolContext) -> ToolReturn:
        """const values of every JSON type."""
        raise NotImplementedError

    async def nullables(self, args: _m.NullablesInput, ctx: ToolContext) -> ToolReturn:
        """null through type arrays, anyOf and oneOf; required but nullable."""
        raise NotImplementedError

    async def unions(self, args: _m.UnionsInput, ctx: ToolContext) -> ToolReturn:
        """anyOf and oneOf unions; a base object merged into each branch."""
        raise NotImplementedError

    async def discriminated(
        self,
        args: _m.DiscriminatedInput,
        ctx: ToolContext,
    ) -> _m.DiscriminatedOutputOption1 | _m.DiscriminatedOutputOption2:
        """Tagged unions: an explicit discriminator and const tags."""
        raise NotImplementedError

    async def all_of(self, args: _m.AllOfInput, ctx: ToolContext) -> _m.AllOfOutput:
        """allOf merges objects (also through $ref); the output is an allOf."""
        raise NotImplementedError

    async def maps(self, args: _m.MapsInput, ctx: ToolContext) -> ToolReturn:
        """Maps through additionalProperties and patternProperties."""
        raise NotImplementedError

    async def tuples(self, args: _m.TuplesInput, ctx: ToolContext) -> ToolReturn:
        """prefixItems tuples, open and closed; draft-07 items arrays."""
        raise NotImplementedError

    async def recursive_defs(self, args: _m.RecursiveDefsInput, ctx: ToolContext) -> _m.RecursiveDefsOutput:
        """Recursive $ref through $defs; the output is a $ref to a recursive def."""
        raise NotImplementedError

    async def recursive_root(self, args: _m.RecursiveRootInput, ctx: ToolContext) -> ToolReturn:
        """A $ref to the root schema."""
        raise NotImplementedError

    async def draft07(self, args: _m.Draft07Input, ctx: ToolContext) -> ToolReturn:
        """A draft-07 schema with definitions and a tuple `items`."""
        raise NotImplementedError

    async def defaults(self, args: _m.DefaultsInput, ctx: ToolContext) -> ToolReturn:
        """Defaults of every JSON type."""
        raise NotImplementedError

    async def conditionals(self, args: _m.ConditionalsInput, ctx: ToolContext) -> _m.ConditionalsOutput:
        """Constraints Python types cannot express: the runtime checks the schema."""
        raise NotImplementedError

    async def constraints(self, args: _m.ConstraintsInput, ctx: ToolContext) -> ToolReturn:
        """Bounds that pydantic checks as the schema does."""
        raise NotImplementedError

    async def output_string(self, args: _m.OutputStringInput, ctx: ToolContext) -> str:
        """The output is a string."""
        raise NotImplementedError

    async def output_integer(self, args: _m.OutputIntegerInput, ctx: ToolContext) -> int:
        """The output is an integer."""
        raise NotImplementedError

    async def output_array(self, args: _m.OutputArrayInput, ctx: ToolContext) -> list[str]:
        """The output is an array of strings."""
        raise NotImplementedError

    async def output_union(
        self,
        args: _m.OutputUnionInput,
        ctx: ToolContext,
    ) -> _m.OutputUnionOutputOption1 | _m.OutputUnionOutputOption2:
        """The output is a union of two objects."""
        raise NotImplementedError

    async def closed_object(self, args: _m.ClosedObjectInput, ctx: ToolContext) -> _m.ClosedObjectOutput:
        """additionalProperties: false in and out."""
        raise NotImplementedError

    async def anything(self, args: _m.AnythingInput, ctx: ToolContext) -> ToolReturn:
        """Schemas that allow any value."""
        raise NotImplementedError

    async def ref_siblings(self, args: _m.RefSiblingsInput, ctx: ToolContext) -> ToolReturn:
        """$ref beside other keywords (2020-12)."""
        raise NotImplementedError

    async def root_union(self, args: _m.RootUnionInput, ctx: ToolContext) -> ToolReturn:
        """An input schema that is a union at the root: one `arguments` object."""
        raise NotImplementedError

    async def names(self, args: _m.NamesInput, ctx: ToolContext) -> ToolReturn:
        """Property names that are not Python identifiers; the wire names are sent unchanged."""
        raise NotImplementedError

    async def names_tool_v2_2(self, args: _m.NamesToolV22Input, ctx: ToolContext) -> ToolReturn:
        """A tool name with a dot and a dash."""
        raise NotImplementedError

    async def names_tool_v2(self, args: _m.NamesToolV2Input, ctx: ToolContext) -> ToolReturn:
        """The same name in other case: another method."""
        raise NotImplementedError
