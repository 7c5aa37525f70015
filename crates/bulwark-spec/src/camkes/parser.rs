//! Tokens to the file as written: component types, the assembly's composition and its
//! configuration, every name with its span. Syntax only; `validate.rs` judges meaning.
//!
//! The first syntax error stops the parse (as `toml` does); it says what was expected.

use std::ops::Range;

use super::lexer::{Token, TokenKind};
use crate::diagnostic::{Source, SpecError};

/// A name as written, with its span.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Name {
    pub(crate) text: String,
    pub(crate) span: Range<usize>,
}

/// A whole file.
#[derive(Debug, Default)]
pub(crate) struct File {
    /// `component Name { ... }` definitions, in file order.
    pub(crate) types: Vec<ComponentType>,
    /// The `assembly { ... }` blocks (one is right; validation says so otherwise).
    pub(crate) assemblies: Vec<Assembly>,
}

/// `component Name { control; provides P i; uses P o; attribute ...; }`.
#[derive(Debug)]
pub(crate) struct ComponentType {
    pub(crate) name: Name,
    /// The `control` keyword, if present: the type is active.
    pub(crate) control: Option<Range<usize>>,
    pub(crate) interfaces: Vec<InterfaceDeclaration>,
}

/// `provides P name;` or `uses P name;`.
#[derive(Debug)]
pub(crate) struct InterfaceDeclaration {
    pub(crate) provides: bool,
    pub(crate) name: Name,
}

/// `assembly { composition { ... } configuration { ... } }`.
#[derive(Debug)]
pub(crate) struct Assembly {
    /// The `assembly` keyword.
    pub(crate) keyword: Range<usize>,
    pub(crate) instances: Vec<Instance>,
    pub(crate) connections: Vec<ConnectionDeclaration>,
    pub(crate) settings: Vec<Setting>,
}

/// `component Type name;` inside a composition.
#[derive(Debug)]
pub(crate) struct Instance {
    pub(crate) type_name: Name,
    pub(crate) name: Name,
}

/// `connection Connector name(from a.x, to b.y);`.
#[derive(Debug)]
pub(crate) struct ConnectionDeclaration {
    pub(crate) connector: Name,
    pub(crate) name: Name,
    pub(crate) from: Vec<End>,
    pub(crate) to: Vec<End>,
}

/// `a.x` on one end of a connection.
#[derive(Debug)]
pub(crate) struct End {
    pub(crate) instance: Name,
    pub(crate) interface: Name,
}

/// `instance.key = value;` in a configuration.
#[derive(Debug)]
pub(crate) struct Setting {
    pub(crate) instance: Name,
    pub(crate) key: Name,
    pub(crate) value: Value,
    pub(crate) value_span: Range<usize>,
}

/// A configuration value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Value {
    /// A whole number, possibly negative (`__COUNTER__` becomes one).
    Integer(i128),
    /// A string's contents.
    Text(String),
    /// Any other bare name (`true`, `NULL`, ...), which no key accepts.
    Word(String),
}

const TOP_LEVEL: &str = "allowed: import, procedure, component and assembly";
const COMPONENT_ITEMS: &str = "allowed: control; provides <Procedure> <name>; \
     uses <Procedure> <name>; attribute <type> <name>;";
const COMPOSITION_ITEMS: &str =
    "allowed: component <Type> <name>; and connection <Connector> <name>(from a.x, to b.y);";

/// Reads the tokens of a whole file.
pub(crate) fn file(source: &Source, tokens: Vec<Token>) -> Result<File, Box<SpecError>> {
    let mut parser = Parser {
        source,
        tokens,
        at: 0,
        counter: 0,
    };
    parser.file()
}

struct Parser<'a> {
    source: &'a Source,
    tokens: Vec<Token>,
    at: usize,
    /// The next value of `__COUNTER__`, which the C preprocessor numbers from 0 in file
    /// order.
    counter: i128,
}

impl Parser<'_> {
    fn peek(&self) -> &Token {
        // The token list always ends with `End`, and `advance` never moves past it.
        &self.tokens[self.at.min(self.tokens.len() - 1)]
    }

    fn advance(&mut self) -> Token {
        let token = self.peek().clone();
        if token.kind != TokenKind::End {
            self.at += 1;
        }
        token
    }

    fn error_here(&self, expected: &str, help: &str) -> Box<SpecError> {
        let token = self.peek();
        Box::new(self.source.error(
            token.span.clone(),
            format!("expected {expected}, found {}", token.kind.describe()),
            help,
        ))
    }

    fn is_punct(&self, c: char) -> bool {
        self.peek().kind == TokenKind::Punct(c)
    }

    fn is_word(&self, word: &str) -> bool {
        matches!(&self.peek().kind, TokenKind::Name(n) if n == word)
    }

    fn punct(&mut self, c: char, help: &str) -> Result<Range<usize>, Box<SpecError>> {
        if self.is_punct(c) {
            Ok(self.advance().span)
        } else {
            Err(self.error_here(&format!("`{c}`"), help))
        }
    }

    fn word(&mut self, word: &str, help: &str) -> Result<Range<usize>, Box<SpecError>> {
        if self.is_word(word) {
            Ok(self.advance().span)
        } else {
            Err(self.error_here(&format!("`{word}`"), help))
        }
    }

    fn name(&mut self, what: &str, help: &str) -> Result<Name, Box<SpecError>> {
        match &self.peek().kind {
            TokenKind::Name(text) => {
                let text = text.clone();
                let span = self.advance().span;
                if let Some(error) = self.source.long_name(span.clone(), &text, what) {
                    return Err(Box::new(error));
                }
                Ok(Name { text, span })
            }
            _ => Err(self.error_here(what, help)),
        }
    }

    /// An optional `;` after a closing brace, as CAmkES allows.
    fn optional_semicolon(&mut self) {
        if self.is_punct(';') {
            self.advance();
        }
    }

    fn file(&mut self) -> Result<File, Box<SpecError>> {
        let mut file = File::default();
        loop {
            let token = self.peek().clone();
            match &token.kind {
                TokenKind::End => return Ok(file),
                TokenKind::Name(word) if word == "import" => self.import()?,
                TokenKind::Name(word) if word == "procedure" => self.procedure()?,
                TokenKind::Name(word) if word == "component" => {
                    let t = self.component_type()?;
                    file.types.push(t);
                }
                TokenKind::Name(word) if word == "assembly" => {
                    let a = self.assembly()?;
                    file.assemblies.push(a);
                }
                TokenKind::Name(word) => {
                    return Err(Box::new(self.source.error(
                        token.span,
                        format!("unknown item `{word}`"),
                        TOP_LEVEL,
                    )))
                }
                _ => return Err(self.error_here("an item", TOP_LEVEL)),
            }
        }
    }

    /// `import <file.camkes>;` or `import "file.camkes";`: not followed.
    fn import(&mut self) -> Result<(), Box<SpecError>> {
        const HELP: &str = "allowed: import <std_connector.camkes>; or import \"file.camkes\";";
        self.advance();
        if self.is_punct('<') {
            self.advance();
            while !self.is_punct('>') {
                if self.peek().kind == TokenKind::End || self.is_punct(';') {
                    return Err(self.error_here("`>`", HELP));
                }
                self.advance();
            }
            self.advance();
        } else if matches!(self.peek().kind, TokenKind::Text(_)) {
            self.advance();
        } else {
            return Err(self.error_here("<file> or \"file\"", HELP));
        }
        self.punct(';', HELP)?;
        Ok(())
    }

    /// `procedure P { ... }`: its methods do not matter here, so they are skipped.
    fn procedure(&mut self) -> Result<(), Box<SpecError>> {
        const HELP: &str = "allowed: procedure <Name> { <method declarations> }";
        self.advance();
        self.name("a procedure name", HELP)?;
        self.skip_block(HELP)?;
        self.optional_semicolon();
        Ok(())
    }

    /// Skips `{ ... }` with nested braces.
    fn skip_block(&mut self, help: &str) -> Result<(), Box<SpecError>> {
        let open = self.punct('{', help)?;
        let mut depth = 1;
        while depth > 0 {
            match self.advance().kind {
                TokenKind::Punct('{') => depth += 1,
                TokenKind::Punct('}') => depth -= 1,
                TokenKind::End => {
                    return Err(Box::new(self.source.error(
                        open,
                        "this `{` is never closed",
                        "allowed: blocks closed with `}` before the end of the file",
                    )))
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn component_type(&mut self) -> Result<ComponentType, Box<SpecError>> {
        const HELP: &str = "allowed: component <Type> { control; provides P i; uses P o; }";
        self.advance();
        let name = self.name("a component type name", HELP)?;
        let open = self.punct('{', HELP)?;
        let mut control = None;
        let mut interfaces = Vec::new();
        loop {
            let token = self.peek().clone();
            let TokenKind::Name(word) = &token.kind else {
                if token.kind == TokenKind::Punct('}') {
                    self.advance();
                    break;
                }
                if token.kind == TokenKind::End {
                    return Err(Box::new(self.source.error(
                        open,
                        format!("the body of component `{}` is never closed", name.text),
                        "allowed: a component body closed with `}`",
                    )));
                }
                return Err(self.error_here("a component item or `}`", COMPONENT_ITEMS));
            };
            match word.as_str() {
                "control" => {
                    control = Some(self.advance().span);
                    self.punct(';', COMPONENT_ITEMS)?;
                }
                "provides" | "uses" | "maybe" => {
                    if word == "maybe" {
                        self.advance();
                        if !self.is_word("uses") {
                            return Err(self.error_here("`uses`", COMPONENT_ITEMS));
                        }
                    }
                    let provides = self.advance().kind == TokenKind::Name("provides".into());
                    self.name("a procedure name", COMPONENT_ITEMS)?;
                    let interface = self.name("an interface name", COMPONENT_ITEMS)?;
                    self.punct(';', COMPONENT_ITEMS)?;
                    interfaces.push(InterfaceDeclaration {
                        provides,
                        name: interface,
                    });
                }
                "attribute" => {
                    // Attributes are read from the configuration; declarations are skipped.
                    while !self.is_punct(';') {
                        if matches!(self.peek().kind, TokenKind::End | TokenKind::Punct('}')) {
                            return Err(self.error_here("`;`", COMPONENT_ITEMS));
                        }
                        self.advance();
                    }
                    self.advance();
                }
                "emits" | "consumes" | "dataport" | "has" | "hardware" => {
                    return Err(Box::new(self.source.error(
                        token.span,
                        format!("`{word}` declarations are outside this CAmkES subset"),
                        "allowed: control, provides, uses and attribute; this subset models \
                         procedure calls only (events are future work in the paper)",
                    )))
                }
                _ => {
                    return Err(Box::new(self.source.error(
                        token.span,
                        format!("unknown component item `{word}`"),
                        COMPONENT_ITEMS,
                    )))
                }
            }
        }
        self.optional_semicolon();
        Ok(ComponentType {
            name,
            control,
            interfaces,
        })
    }

    fn assembly(&mut self) -> Result<Assembly, Box<SpecError>> {
        const HELP: &str = "allowed: assembly { composition { ... } configuration { ... } }";
        let keyword = self.advance().span;
        self.punct('{', HELP)?;
        self.word("composition", HELP)?;
        let mut assembly = Assembly {
            keyword,
            instances: Vec::new(),
            connections: Vec::new(),
            settings: Vec::new(),
        };
        self.composition(&mut assembly)?;
        let configured = self.is_word("configuration");
        if configured {
            self.advance();
            self.configuration(&mut assembly)?;
        }
        if !self.is_punct('}') {
            let expected = if configured {
                "`}`"
            } else {
                "`configuration` or `}`"
            };
            return Err(self.error_here(expected, HELP));
        }
        self.advance();
        self.optional_semicolon();
        Ok(assembly)
    }

    fn composition(&mut self, assembly: &mut Assembly) -> Result<(), Box<SpecError>> {
        self.punct('{', COMPOSITION_ITEMS)?;
        loop {
            let token = self.peek().clone();
            match &token.kind {
                TokenKind::Punct('}') => {
                    self.advance();
                    self.optional_semicolon();
                    return Ok(());
                }
                TokenKind::Name(word) if word == "component" => {
                    self.advance();
                    let type_name = self.name("a component type", COMPOSITION_ITEMS)?;
                    let name = self.name("an instance name", COMPOSITION_ITEMS)?;
                    self.punct(';', COMPOSITION_ITEMS)?;
                    assembly.instances.push(Instance { type_name, name });
                }
                TokenKind::Name(word) if word == "connection" => {
                    self.advance();
                    let c = self.connection()?;
                    assembly.connections.push(c);
                }
                TokenKind::Name(word) => {
                    return Err(Box::new(self.source.error(
                        token.span,
                        format!("unknown composition item `{word}`"),
                        COMPOSITION_ITEMS,
                    )))
                }
                _ => {
                    return Err(
                        self.error_here("`component`, `connection` or `}`", COMPOSITION_ITEMS)
                    )
                }
            }
        }
    }

    fn connection(&mut self) -> Result<ConnectionDeclaration, Box<SpecError>> {
        const HELP: &str =
            "allowed: connection <Connector> <name>(from <instance>.<interface>, to <instance>.<interface>);";
        let connector = self.name("a connector type", HELP)?;
        let name = self.name("a connection name", HELP)?;
        self.punct('(', HELP)?;
        let mut from = Vec::new();
        let mut to = Vec::new();
        loop {
            let is_from = if self.is_word("from") {
                true
            } else if self.is_word("to") {
                false
            } else {
                return Err(self.error_here("`from` or `to`", HELP));
            };
            self.advance();
            let instance = self.name("an instance name", HELP)?;
            self.punct('.', HELP)?;
            let interface = self.name("an interface name", HELP)?;
            let end = End {
                instance,
                interface,
            };
            if is_from {
                from.push(end);
            } else {
                to.push(end);
            }
            if self.is_punct(',') {
                self.advance();
            } else {
                break;
            }
        }
        self.punct(')', HELP)?;
        self.punct(';', HELP)?;
        Ok(ConnectionDeclaration {
            connector,
            name,
            from,
            to,
        })
    }

    fn configuration(&mut self, assembly: &mut Assembly) -> Result<(), Box<SpecError>> {
        const HELP: &str = "allowed: <instance>.<attribute> = <value>; lines";
        self.punct('{', HELP)?;
        loop {
            if self.is_punct('}') {
                self.advance();
                self.optional_semicolon();
                return Ok(());
            }
            let instance = self.name("an instance name or `}`", HELP)?;
            self.punct('.', HELP)?;
            let key = self.name("an attribute name", HELP)?;
            self.punct('=', HELP)?;
            let (value, value_span) = self.value()?;
            self.punct(';', HELP)?;
            assembly.settings.push(Setting {
                instance,
                key,
                value,
                value_span,
            });
        }
    }

    fn value(&mut self) -> Result<(Value, Range<usize>), Box<SpecError>> {
        const HELP: &str = "allowed: a whole number, a \"string\" or __COUNTER__";
        let token = self.peek().clone();
        let value = match token.kind {
            TokenKind::Integer(n) => Value::Integer(i128::from(n)),
            TokenKind::Text(text) => Value::Text(text),
            TokenKind::Name(word) if word == "__COUNTER__" => {
                self.counter += 1;
                Value::Integer(self.counter - 1)
            }
            TokenKind::Name(word) => Value::Word(word),
            TokenKind::Punct('-') => {
                self.advance();
                let TokenKind::Integer(n) = self.peek().kind else {
                    return Err(self.error_here("a number after `-`", HELP));
                };
                let span = token.span.start..self.advance().span.end;
                return Ok((Value::Integer(-i128::from(n)), span));
            }
            _ => return Err(self.error_here("a value", HELP)),
        };
        self.advance();
        Ok((value, token.span))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::camkes::lexer::tokens;

    fn parse(text: &str) -> Result<File, String> {
        let source = Source::new("t.camkes", text);
        let tokens = tokens(&source, text).map_err(|e| e.to_string())?;
        file(&source, tokens).map_err(|e| e.to_string())
    }

    #[test]
    fn a_small_file_reads_into_its_parts() {
        let f = parse(
            "import <std_connector.camkes>;\n\
             procedure P { void f(in int x); };\n\
             component C { control; uses P o; attribute int requestor; }\n\
             component S { provides P i; }\n\
             assembly { composition { component C c; component S s;\n\
             connection seL4RPCCall k(from c.o, to s.i); }\n\
             configuration { c._priority = 3; c.requestor = __COUNTER__; s.i_priority_protocol = \"fixed\"; c.x = -4; } }",
        )
        .unwrap();
        assert_eq!(f.types.len(), 2);
        assert!(f.types[0].control.is_some() && f.types[1].control.is_none());
        assert_eq!(f.assemblies.len(), 1);
        let a = &f.assemblies[0];
        assert_eq!(a.instances.len(), 2);
        assert_eq!(a.connections[0].from[0].interface.text, "o");
        assert_eq!(a.settings[1].value, Value::Integer(0));
        assert_eq!(a.settings[2].value, Value::Text("fixed".into()));
        assert_eq!(a.settings[3].value, Value::Integer(-4));
    }

    #[test]
    fn syntax_errors_say_what_was_expected() {
        assert_eq!(
            parse("assembly { composition { component C c } }").unwrap_err(),
            "t.camkes:1:40: expected `;`, found `}`"
        );
        assert_eq!(
            parse("widget x;").unwrap_err(),
            "t.camkes:1:1: unknown item `widget`"
        );
        assert_eq!(
            parse("component C { emits E e; }").unwrap_err(),
            "t.camkes:1:15: `emits` declarations are outside this CAmkES subset"
        );
        assert_eq!(
            parse("procedure P { void f(); ").unwrap_err(),
            "t.camkes:1:13: this `{` is never closed"
        );
        assert_eq!(
            parse("assembly { composition {} configuration { a.b = ; } }").unwrap_err(),
            "t.camkes:1:49: expected a value, found `;`"
        );
    }
}
