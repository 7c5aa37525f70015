//! The CAmkES ADL subset: component types, one assembly, and the configuration attributes of
//! the paper's framework, read into a [`ComponentSystem`].
//!
//! Three passes, as RTIC does it: `lexer` (text to tokens), `parser` (tokens to the file as
//! written; the first syntax error stops it) and `validate` (meaning; every error is kept).
//! Errors name file, line and column, what is wrong and what is allowed.
//!
//! # The subset
//!
//! ```text
//! file          := item*
//! item          := "import" ( "<" ... ">" | STRING ) ";"          -- not followed
//!                | "procedure" NAME "{" ... "}" ";"?               -- methods skipped
//!                | "component" NAME "{" component_item* "}" ";"?
//!                | "assembly" "{" composition configuration? "}" ";"?
//! component_item:= "control" ";"                                   -- active: one task
//!                | "maybe"? "uses" NAME NAME ";" | "provides" NAME NAME ";"
//!                | "attribute" ... ";"                             -- declarations skipped
//! composition   := "composition" "{" ( instance | connection )* "}" ";"?
//! instance      := "component" TYPE NAME ";"
//! connection    := "connection" CONNECTOR NAME "(" end ( "," end )* ")" ";"
//! end           := ( "from" | "to" ) NAME "." NAME                 -- one `to`, >= 1 `from`
//! configuration := "configuration" "{" ( NAME "." NAME "=" value ";" )* "}" ";"?
//! value         := INTEGER | "-" INTEGER | STRING | "__COUNTER__"  -- 0, 1, 2... in file order
//! ```
//!
//! Comments are `//` and `/* */`; the C preprocessor is not run (`#` lines are refused).
//! Connectors must be procedure connectors: `seL4RPCCall`, `seL4RPCCallPrioritized` or any
//! other name starting `seL4RPC`. An active component type (`control;`) provides no
//! interface (the paper's footnote 2); a passive one provides at least one.
//!
//! # Configuration attributes
//!
//! For an active instance `a` (one task, named `a`):
//!
//! | key | value | |
//! | --- | --- | --- |
//! | `a._priority` | `0..=255` | required: the task's priority (CAmkES's own attribute) |
//! | `a._period` | `"10ms"` | required: the task's minimum inter-arrival time `T` |
//! | `a.requestor` | `0..` or `__COUNTER__` | the paper's task identifier; unique; default: the smallest unused |
//! | `a._body` | `"execute 1ms; request o; execute 500us"` | what a job does; default: request through every connected `uses` interface |
//! | `a._budget` | `"3ms"` | optional: the task runs in an SPR reservation of this budget every period (its scheduling context, which servers serving it spend too) |
//! | `a._eta` | `"1ms"` | optional, with `_budget`: the reservation's non-preemptive region, at most the budget |
//!
//! For each interface `i` that a passive instance `b` provides:
//!
//! | key | value | |
//! | --- | --- | --- |
//! | `b.i_priority_protocol` | `"propagated"`, `"inherited"`, `"fixed"` | required (the paper's attribute) |
//! | `b.i_priority` | `0..=255` | the pool's priority; `fixed` at 255 is NPCS; default: computed ceiling |
//! | `b.i_num_threads` | `1..=1024` | the pool's size (the paper's attribute); default: computed |
//! | `b.i_body` | `"execute 2ms; request lock"` | what the procedure does per request |
//!
//! A body is steps separated by `;`: `execute <time>` (units ns, us, ms, s) and
//! `request <uses interface of this component>`. Bodies make nested requests data: they say
//! which CPI of a component sends on which connection, which CAmkES connections alone do
//! not (the paper's two caveats). The configuration analyzer in `bulwark-analysis`
//! (`component_graph`) computes `_priority` and `_num_threads` and prints them as these
//! lines, ready to paste back.
//!
//! ```
//! let source = r#"
//! component Client { control; uses P o; }
//! component Server { provides P i; }
//! assembly {
//!     composition {
//!         component Client c;
//!         component Server s;
//!         connection seL4RPCCall k(from c.o, to s.i);
//!     }
//!     configuration {
//!         c._priority = 10;
//!         c._period = "10ms";
//!         s.i_priority_protocol = "inherited";
//!     }
//! }
//! "#;
//! let system = bulwark_spec::parse_camkes(source, "small.camkes").unwrap();
//! assert_eq!(system.components.len(), 2);
//!
//! let wrong = source.replace("\"inherited\"", "\"pip\"");
//! let errors = bulwark_spec::parse_camkes(&wrong, "small.camkes").unwrap_err();
//! assert_eq!(
//!     errors.errors()[0].to_string(),
//!     "small.camkes:13:33: unknown priority protocol `pip`"
//! );
//! ```

mod lexer;
mod parser;
mod validate;

use std::path::Path;

use crate::component::{ComponentSystem, LocatedSystem};
use crate::diagnostic::{Diagnostics, Source};

/// Reads a CAmkES file's text, naming it `file` in diagnostics.
pub fn parse_camkes(source: &str, file: &str) -> Result<ComponentSystem, Diagnostics> {
    parse_camkes_located(source, file).map(|located| located.system)
}

/// [`parse_camkes`], keeping where each connection is declared, for problems found later.
pub fn parse_camkes_located(source: &str, file: &str) -> Result<LocatedSystem, Diagnostics> {
    let located = Source::new(file, source);
    let tokens = lexer::tokens(&located, source).map_err(|e| Diagnostics::new(file, vec![*e]))?;
    let parsed = parser::file(&located, tokens).map_err(|e| Diagnostics::new(file, vec![*e]))?;
    let (system, declarations) = validate::validate(&parsed, &located, source)
        .map_err(|errors| Diagnostics::new(file, errors))?;
    Ok(LocatedSystem::new(system, located, declarations))
}

/// Reads the CAmkES file at `path`; a file that cannot be read is one diagnostic naming it.
pub fn load_camkes(path: &Path) -> Result<ComponentSystem, Diagnostics> {
    load_camkes_located(path).map(|located| located.system)
}

/// [`load_camkes`], keeping where each connection is declared.
pub fn load_camkes_located(path: &Path) -> Result<LocatedSystem, Diagnostics> {
    let file = path.display().to_string();
    let text = crate::read_text(path, "a readable UTF-8 CAmkES file")?;
    parse_camkes_located(&text, &file)
}
