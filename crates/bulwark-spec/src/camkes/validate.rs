//! The CAmkES file as written to a [`ComponentSystem`]: every check runs and every error is
//! kept, then the system is built (validate, then commit, as `crate::validate` does).

use std::collections::HashMap;
use std::ops::Range;

use bulwark_core::{Duration, Priority};

use super::parser::{
    Assembly, ComponentType, ConnectionDeclaration, End, File, Name, Setting, Value,
};
use crate::component::{
    self, assign_requestors, Component, ComponentKind, ComponentSystem, Connection, ConnectionId,
    Cpi, CpiId, CpiProtocol, Declarations, ProcedureStep, ReservationField, Task, TaskReservation,
    MAX_REQUESTOR, MAX_THREADS,
};
use crate::diagnostic::{Source, SpecError};
use crate::model::CostModel;
use crate::units;
use crate::validate::PRIORITY_HELP;

const BODY_HELP: &str = "allowed: steps separated by `;`: execute <time> and \
     request <uses interface>, like \"execute 1ms; request out; execute 500us\"";
const ACTIVE_KEYS: &str = "_priority, _period, requestor, _body, _budget, _eta";
const CPI_SUFFIXES: [&str; 4] = ["_priority_protocol", "_priority", "_num_threads", "_body"];

/// Checks a parsed file; on failure, the errors sorted into file order.
/// The system comes with where its instances and connections are declared.
pub(crate) fn validate(
    file: &File,
    source: &Source,
    text: &str,
) -> Result<(ComponentSystem, Declarations), Vec<SpecError>> {
    let mut checker = Checker {
        source,
        text,
        errors: Vec::new(),
        declarations: Declarations::default(),
        dropped_ends: Vec::new(),
        fromless_connection: false,
    };
    let system = checker.file(file);
    let declarations = std::mem::take(&mut checker.declarations);
    source
        .finish(system, checker.errors)
        .map(|system| (system, declarations))
}

struct Checker<'a> {
    source: &'a Source,
    text: &'a str,
    errors: Vec<SpecError>,
    /// Where each component (instance) and connection of the built system is declared.
    declarations: Declarations,
    /// The `from` ends of connections dropped for an error (reported there), as patterns of
    /// (instance, interface), `None` where the end named no such instance (or interface) and
    /// so may have meant any: a request that matches one is not also called unconnected.
    dropped_ends: Vec<(Option<String>, Option<String>)>,
    /// A connection without a `from` end was reported: any request may have been meant for
    /// it, so none is called unconnected.
    fromless_connection: bool,
}

/// The requests a dropped connection's `from` end may have been meant for: its instance and
/// interface, each `None` (any) when it names none that exists (a misspelt instance may have
/// meant any instance with that interface; a misspelt interface any of the instance's).
fn dropped_end(
    end: &End,
    types: &[Option<TypeInfo<'_>>],
    instances: &[InstanceInfo<'_>],
) -> (Option<String>, Option<String>) {
    let Some(instance) = instances.iter().find(|i| i.name.text == end.instance.text) else {
        return (None, Some(end.interface.text.clone()));
    };
    let known = instance
        .type_index
        .and_then(|t| types.get(t)?.as_ref())
        .is_some_and(|info| info.uses.contains(&end.interface.text.as_str()));
    (
        Some(end.instance.text.clone()),
        known.then(|| end.interface.text.clone()),
    )
}

/// A component type, checked.
struct TypeInfo<'f> {
    name: &'f str,
    active: bool,
    provides: Vec<&'f str>,
    uses: Vec<&'f str>,
}

/// A component instance, with its type when that is known.
struct InstanceInfo<'f> {
    name: &'f Name,
    type_index: Option<usize>,
    /// What its configuration said so far.
    config: Config<'f>,
}

/// The attributes given for one instance, each with the setting that gave it.
#[derive(Default)]
struct Config<'f> {
    priority: Option<Priority>,
    period: Option<Duration>,
    /// `_budget` and `_eta`: the task's SPR reservation, each with its setting.
    budget: Option<(Duration, &'f Setting)>,
    eta: Option<(Duration, &'f Setting)>,
    requestor: Option<(u32, &'f Setting)>,
    body: Option<&'f Setting>,
    cpis: HashMap<usize, CpiConfig<'f>>,
    /// Every key seen, with the line it was first set on.
    seen: HashMap<&'f str, usize>,
    /// True when some value failed its check (so missing-key errors are not piled on).
    broken: bool,
}

#[derive(Default)]
struct CpiConfig<'f> {
    protocol: Option<CpiProtocol>,
    priority: Option<Priority>,
    threads: Option<u32>,
    body: Option<&'f Setting>,
}

impl<'f> Checker<'_> {
    fn report(&mut self, span: Range<usize>, message: impl Into<String>, help: impl Into<String>) {
        let error = self.source.error(span, message, help);
        self.errors.push(error);
    }

    fn file(&mut self, file: &'f File) -> Option<ComponentSystem> {
        let types = self.types(&file.types);
        let Some(assembly) = file.assemblies.first() else {
            self.report(
                0..0,
                "this file has no assembly",
                "add assembly { composition { ... } configuration { ... } }",
            );
            return None;
        };
        for extra in &file.assemblies[1..] {
            let line = self.source.line(assembly.keyword.start);
            self.report(
                extra.keyword.clone(),
                format!("a second assembly; the first is on line {line}"),
                "allowed: one assembly per file",
            );
        }
        self.assembly(assembly, &types)
    }

    fn types(&mut self, types: &'f [ComponentType]) -> Vec<Option<TypeInfo<'f>>> {
        let mut first_line: HashMap<&str, usize> = HashMap::new();
        let mut out = Vec::new();
        for t in types {
            if let Some(line) = first_line.get(t.name.text.as_str()) {
                self.report(
                    t.name.span.clone(),
                    format!(
                        "component type `{}` is already defined on line {line}",
                        t.name.text
                    ),
                    "allowed: one definition per component type",
                );
                out.push(None);
                continue;
            }
            first_line.insert(&t.name.text, self.source.line(t.name.span.start));
            let mut info = TypeInfo {
                name: &t.name.text,
                active: t.control.is_some(),
                provides: Vec::new(),
                uses: Vec::new(),
            };
            let mut interface_line: HashMap<&str, usize> = HashMap::new();
            for interface in &t.interfaces {
                let name = interface.name.text.as_str();
                if let Some(line) = interface_line.get(name) {
                    self.report(
                        interface.name.span.clone(),
                        format!(
                            "interface `{name}` is already declared on line {line} in `{}`",
                            t.name.text
                        ),
                        "allowed: a name no other interface of this component type has",
                    );
                    continue;
                }
                interface_line.insert(name, self.source.line(interface.name.span.start));
                if interface.provides && info.active {
                    self.report(
                        interface.name.span.clone(),
                        format!("active component type `{}` provides `{name}`", t.name.text),
                        "an active component (control;) originates a task and provides no \
                         interface; move the interface to a passive component",
                    );
                    continue;
                }
                if interface.provides {
                    info.provides.push(name);
                } else {
                    info.uses.push(name);
                }
            }
            let provides_any = t.interfaces.iter().any(|i| i.provides);
            if !info.active && !provides_any {
                self.report(
                    t.name.span.clone(),
                    format!(
                        "passive component type `{}` provides no interface",
                        t.name.text
                    ),
                    "add provides <Procedure> <name>; or, for a component that originates a \
                     task, control;",
                );
            }
            out.push(Some(info));
        }
        out
    }

    fn assembly(
        &mut self,
        assembly: &'f Assembly,
        types: &[Option<TypeInfo<'f>>],
    ) -> Option<ComponentSystem> {
        let mut instances = self.instances(assembly, types);
        let connections = self.connections(assembly, types, &instances);
        for setting in &assembly.settings {
            self.setting(setting, types, &mut instances);
        }
        self.required_settings(types, &instances);
        self.unique_requestors(&instances);
        let mut components = Vec::new();
        let mut all_valid = true;
        for (index, instance) in instances.iter().enumerate() {
            match self.component(index, instance, types, &connections) {
                Some(c) => components.push(c),
                None => all_valid = false,
            }
        }
        if !all_valid || !self.errors.is_empty() {
            return None;
        }
        assign_requestors(&mut components);
        let (connections, spans) = connections.into_iter().unzip();
        self.declarations = Declarations {
            // A valid file has one component per instance, in declaration order.
            components: instances.iter().map(|i| i.name.span.clone()).collect(),
            connections: spans,
        };
        Some(ComponentSystem {
            components,
            connections,
            cost: CostModel::FREE,
        })
    }

    fn instances(
        &mut self,
        assembly: &'f Assembly,
        types: &[Option<TypeInfo<'f>>],
    ) -> Vec<InstanceInfo<'f>> {
        let mut out: Vec<InstanceInfo<'f>> = Vec::new();
        for instance in &assembly.instances {
            if let Some(first) = out.iter().find(|i| i.name.text == instance.name.text) {
                let line = self.source.line(first.name.span.start);
                self.report(
                    instance.name.span.clone(),
                    format!(
                        "component instance `{}` is already declared on line {line}",
                        instance.name.text
                    ),
                    "allowed: a name no other instance in this composition has",
                );
                continue;
            }
            let found = types.iter().position(|t| {
                t.as_ref()
                    .is_some_and(|t| t.name == instance.type_name.text)
            });
            // A type defined twice keeps its first definition, so `found` sees it.
            if found.is_none() {
                let names: Vec<&str> = types.iter().flatten().map(|t| t.name).collect();
                self.report(
                    instance.type_name.span.clone(),
                    format!("no component type is called `{}`", instance.type_name.text),
                    if names.is_empty() {
                        format!(
                            "define it before the assembly: component {} {{ ... }}",
                            instance.type_name.text
                        )
                    } else {
                        format!(
                            "allowed: {} (the component types in this file)",
                            names.join(", ")
                        )
                    },
                );
            }
            out.push(InstanceInfo {
                name: &instance.name,
                type_index: found,
                config: Config::default(),
            });
        }
        out
    }

    /// The connections, one per `from` end, each with its declaration's line (for "already
    /// connected" messages); ends that do not resolve are reported and left out.
    fn connections(
        &mut self,
        assembly: &'f Assembly,
        types: &[Option<TypeInfo<'f>>],
        instances: &[InstanceInfo<'f>],
    ) -> Vec<(Connection, Range<usize>)> {
        let mut out: Vec<(Connection, Range<usize>)> = Vec::new();
        for declaration in &assembly.connections {
            let connector = &declaration.connector;
            if !connector.text.starts_with("seL4RPC") {
                self.report(
                    connector.span.clone(),
                    format!(
                        "connector `{}` does not carry procedure calls",
                        connector.text
                    ),
                    "allowed: seL4RPCCall, seL4RPCCallPrioritized or another seL4RPC connector \
                     (this subset models procedure calls only)",
                );
                self.drop_ends(declaration, types, instances);
                continue;
            }
            let name = &declaration.name;
            if declaration.from.is_empty() {
                self.report(
                    name.span.clone(),
                    format!("connection `{}` has no `from` end", name.text),
                    "allowed: connection <Connector> <name>(from <instance>.<interface>, \
                     to <instance>.<interface>);",
                );
                self.fromless_connection = true;
            }
            if declaration.to.len() != 1 {
                self.report(
                    name.span.clone(),
                    format!(
                        "connection `{}` has {} `to` ends",
                        name.text,
                        declaration.to.len()
                    ),
                    "allowed: exactly one `to` end per connection (the prioritized connectors \
                     require it); split it into separate connections",
                );
                self.drop_ends(declaration, types, instances);
                continue;
            }
            let to_end = &declaration.to[0];
            let to = self
                .end(&to_end.instance, &to_end.interface, true, types, instances)
                .map(|(component, cpi)| CpiId { component, cpi });
            if to.is_none() {
                self.drop_ends(declaration, types, instances);
            }
            for from_end in &declaration.from {
                let Some((from, _)) = self.end(
                    &from_end.instance,
                    &from_end.interface,
                    false,
                    types,
                    instances,
                ) else {
                    let pattern = dropped_end(from_end, types, instances);
                    self.dropped_ends.push(pattern);
                    continue;
                };
                let interface = from_end.interface.text.as_str();
                let earlier = out
                    .iter()
                    .find(|(c, _)| c.from == from && c.interface.as_deref() == Some(interface));
                if let Some((first, first_span)) = earlier {
                    let line = self.source.line(first_span.start);
                    self.report(
                        from_end.interface.span.clone(),
                        format!(
                            "`{}.{interface}` is already connected by `{}` on line {line}",
                            from_end.instance.text, first.name
                        ),
                        "allowed: one connection per uses interface; use another uses \
                         interface for another CPI",
                    );
                    continue;
                }
                if let Some(to) = to {
                    out.push((
                        Connection {
                            name: name.text.clone(),
                            from,
                            interface: Some(interface.to_owned()),
                            procedure: None,
                            to,
                        },
                        name.span.clone(),
                    ));
                }
            }
        }
        out
    }

    /// Keeps `declaration`'s `from` ends as dropped: it was reported and builds no
    /// connection.
    fn drop_ends(
        &mut self,
        declaration: &ConnectionDeclaration,
        types: &[Option<TypeInfo<'f>>],
        instances: &[InstanceInfo<'f>],
    ) {
        for end in &declaration.from {
            let pattern = dropped_end(end, types, instances);
            self.dropped_ends.push(pattern);
        }
    }

    /// One end of a connection: its instance's index and the interface's index among the
    /// type's `provides` (to ends) or `uses` (from ends) interfaces.
    fn end(
        &mut self,
        instance: &Name,
        interface: &Name,
        provided: bool,
        types: &[Option<TypeInfo<'f>>],
        instances: &[InstanceInfo<'f>],
    ) -> Option<(usize, usize)> {
        let Some(index) = instances.iter().position(|i| i.name.text == instance.text) else {
            let names: Vec<&str> = instances.iter().map(|i| i.name.text.as_str()).collect();
            self.report(
                instance.span.clone(),
                format!("no component instance is called `{}`", instance.text),
                instances_help(&names),
            );
            return None;
        };
        // An instance of an unknown type was reported already.
        let info = types.get(instances[index].type_index?)?.as_ref()?;
        let (wanted, other, role) = if provided {
            (&info.provides, &info.uses, "to")
        } else {
            (&info.uses, &info.provides, "from")
        };
        if let Some(position) = wanted.iter().position(|n| *n == interface.text) {
            return Some((index, position));
        }
        let (kind, opposite) = if provided {
            ("provides", "uses")
        } else {
            ("uses", "provides")
        };
        let message = if other.contains(&interface.text.as_str()) {
            format!(
                "`{}.{}` is a {opposite} interface, but a connection's `{role}` end is a {kind} interface",
                instance.text, interface.text
            )
        } else {
            format!(
                "`{}` (component type `{}`) {kind} no interface `{}`",
                instance.text, info.name, interface.text
            )
        };
        let mut help = if wanted.is_empty() {
            format!(
                "component type `{}` declares no {kind} interface",
                info.name
            )
        } else {
            format!(
                "allowed: {} (the {kind} interfaces of component type `{}`)",
                wanted.join(", "),
                info.name
            )
        };
        if other.contains(&interface.text.as_str()) {
            help.push_str("; a connection goes from a uses interface to a provides interface");
        }
        self.report(interface.span.clone(), message, help);
        None
    }

    fn setting(
        &mut self,
        setting: &'f Setting,
        types: &[Option<TypeInfo<'f>>],
        instances: &mut [InstanceInfo<'f>],
    ) {
        let Some(index) = instances
            .iter()
            .position(|i| i.name.text == setting.instance.text)
        else {
            let names: Vec<&str> = instances.iter().map(|i| i.name.text.as_str()).collect();
            self.report(
                setting.instance.span.clone(),
                format!(
                    "no component instance is called `{}`",
                    setting.instance.text
                ),
                instances_help(&names),
            );
            return;
        };
        let Some(Some(info)) = instances[index].type_index.map(|t| &types[t]) else {
            return;
        };
        let key = setting.key.text.as_str();
        let instance = setting.instance.text.as_str();
        if let Some(line) = instances[index].config.seen.get(key) {
            self.report(
                setting.key.span.clone(),
                format!("`{instance}.{key}` is already set on line {line}"),
                "allowed: each attribute once",
            );
            return;
        }
        let line = self.source.line(setting.key.span.start);
        let config = &mut instances[index].config;
        config.seen.insert(key, line);
        let ok = if info.active {
            self.active_setting(setting, config)
        } else {
            match cpi_key(key, &info.provides) {
                Some((cpi, suffix)) => {
                    let cpi_config = config.cpis.entry(cpi).or_default();
                    self.cpi_setting(setting, suffix, cpi_config)
                }
                None => {
                    self.report(
                        setting.key.span.clone(),
                        format!("`{instance}.{key}` is not an attribute of passive component `{instance}`"),
                        format!(
                            "allowed: for each interface it provides ({}): <interface>_priority_protocol, \
                             <interface>_priority, <interface>_num_threads, <interface>_body",
                            info.provides.join(", ")
                        ),
                    );
                    true
                }
            }
        };
        if !ok {
            instances[index].config.broken = true;
        }
    }

    /// One attribute of an active component; false when its value is wrong.
    fn active_setting(&mut self, setting: &'f Setting, config: &mut Config<'f>) -> bool {
        match setting.key.text.as_str() {
            "_priority" => {
                config.priority = self.priority(setting);
                config.priority.is_some()
            }
            "_period" => {
                config.period = self.period(setting);
                config.period.is_some()
            }
            "_budget" => {
                config.budget = self.time(setting).map(|t| (t, setting));
                config.budget.is_some()
            }
            "_eta" => {
                config.eta = self.time(setting).map(|t| (t, setting));
                config.eta.is_some()
            }
            "requestor" => {
                config.requestor = self.requestor(setting).map(|r| (r, setting));
                config.requestor.is_some()
            }
            "_body" => {
                let is_text = self.text_value(setting, "a body in quotes, like \"execute 1ms\"");
                if is_text {
                    config.body = Some(setting);
                }
                is_text
            }
            key => {
                let instance = &setting.instance.text;
                self.report(
                    setting.key.span.clone(),
                    format!(
                        "`{instance}.{key}` is not an attribute of active component `{instance}`"
                    ),
                    format!("allowed: {ACTIVE_KEYS}"),
                );
                true
            }
        }
    }

    /// One attribute of a CPI; false when its value is wrong.
    fn cpi_setting(
        &mut self,
        setting: &'f Setting,
        suffix: &str,
        config: &mut CpiConfig<'f>,
    ) -> bool {
        match suffix {
            "_priority_protocol" => {
                config.protocol = self.protocol(setting);
                config.protocol.is_some()
            }
            "_priority" => {
                config.priority = self.priority(setting);
                config.priority.is_some()
            }
            "_num_threads" => {
                config.threads = self.threads(setting);
                config.threads.is_some()
            }
            _ => {
                let is_text = self.text_value(setting, "a body in quotes, like \"execute 1ms\"");
                if is_text {
                    config.body = Some(setting);
                }
                is_text
            }
        }
    }

    /// Reports a value of the wrong kind: `expected` says which kind is right.
    fn wrong_kind(&mut self, setting: &Setting, expected: &str, help: &str) {
        let found = match &setting.value {
            Value::Integer(n) => format!("the number {n}"),
            Value::Text(text) => format!("the string \"{text}\""),
            Value::Word(word) => format!("`{word}`"),
        };
        self.report(
            setting.value_span.clone(),
            format!(
                "`{}.{}` must be {expected}, not {found}",
                setting.instance.text, setting.key.text
            ),
            help,
        );
    }

    fn text_value(&mut self, setting: &Setting, expected: &str) -> bool {
        if matches!(setting.value, Value::Text(_)) {
            return true;
        }
        self.wrong_kind(setting, expected, BODY_HELP);
        false
    }

    fn integer(&mut self, setting: &Setting, help: &str) -> Option<i128> {
        match setting.value {
            Value::Integer(n) => Some(n),
            _ => {
                self.wrong_kind(setting, "a whole number", help);
                None
            }
        }
    }

    fn priority(&mut self, setting: &Setting) -> Option<Priority> {
        let n = self.integer(setting, PRIORITY_HELP)?;
        crate::validate::priority_of(n)
            .map_err(|message| self.report(setting.value_span.clone(), message, PRIORITY_HELP))
            .ok()
    }

    fn requestor(&mut self, setting: &Setting) -> Option<u32> {
        const HELP: &str =
            "allowed: a whole number from 0 up, unique per task (__COUNTER__ gives one)";
        let n = self.integer(setting, HELP)?;
        let id = u32::try_from(n).ok().filter(|&id| id <= MAX_REQUESTOR);
        if id.is_none() {
            self.report(
                setting.value_span.clone(),
                format!("requestor {n} is outside 0..={MAX_REQUESTOR}"),
                HELP,
            );
        }
        id
    }

    fn threads(&mut self, setting: &Setting) -> Option<u32> {
        let help = format!(
            "allowed: 1..={MAX_THREADS} threads; leave it out and the analyzer sizes the pool"
        );
        let n = self.integer(setting, &help)?;
        match u32::try_from(n) {
            Ok(t) if (1..=MAX_THREADS).contains(&t) => Some(t),
            _ => {
                self.report(
                    setting.value_span.clone(),
                    format!("num_threads {n} is outside 1..={MAX_THREADS}"),
                    help,
                );
                None
            }
        }
    }

    fn period(&mut self, setting: &Setting) -> Option<Duration> {
        let time = self.time(setting)?;
        if time.is_zero() {
            self.report(
                setting.value_span.clone(),
                "period cannot be zero",
                "allowed: a time longer than zero, like \"10ms\"",
            );
            return None;
        }
        Some(time)
    }

    /// A time in quotes, zero included.
    fn time(&mut self, setting: &Setting) -> Option<Duration> {
        let result = match &setting.value {
            Value::Text(text) => units::parse_time(text),
            Value::Integer(n) => Err(units::time_without_unit(&n.to_string())),
            Value::Word(_) => {
                self.wrong_kind(setting, "a time in quotes", &units::time_help());
                return None;
            }
        };
        match result {
            Ok(time) => Some(time),
            Err(e) => {
                self.report(setting.value_span.clone(), e.message, e.help);
                None
            }
        }
    }

    /// The task's reservation from `_budget` and `_eta`: `Some(None)` without either, `None`
    /// (reported) when they do not fit the period or `_eta` comes alone.
    fn reservation(
        &mut self,
        name: &str,
        config: &Config<'f>,
        period: Duration,
    ) -> Option<Option<TaskReservation>> {
        let Some((budget, budget_setting)) = config.budget else {
            if let Some((_, eta)) = config.eta {
                self.report(
                    eta.key.span.clone(),
                    format!("`{name}._eta` without `{name}._budget`"),
                    format!(
                        "allowed: {name}._eta beside {name}._budget = \"2ms\";, which puts the \
                         task in an SPR reservation"
                    ),
                );
                return None;
            }
            return Some(None);
        };
        let eta = config.eta.map_or(Duration::ZERO, |(eta, _)| eta);
        match component::reservation(budget, eta, period) {
            Ok(reservation) => Some(Some(reservation)),
            Err((field, message, help)) => {
                let setting = match (field, config.eta) {
                    (ReservationField::NonPreemptive, Some((_, eta))) => eta,
                    _ => budget_setting,
                };
                self.report(setting.value_span.clone(), message, help);
                None
            }
        }
    }

    fn protocol(&mut self, setting: &Setting) -> Option<CpiProtocol> {
        const HELP: &str = "allowed: \"propagated\", \"inherited\", \"fixed\" \
             (fixed with <interface>_priority = 255 is NPCS)";
        let Value::Text(text) = &setting.value else {
            self.wrong_kind(setting, "a protocol in quotes", HELP);
            return None;
        };
        let protocol = CpiProtocol::from_name(text);
        if protocol.is_none() {
            self.report(
                setting.value_span.clone(),
                format!("unknown priority protocol `{text}`"),
                HELP,
            );
        }
        protocol
    }

    /// Every active instance has `_priority` and `_period`; every CPI has its protocol.
    fn required_settings(
        &mut self,
        types: &[Option<TypeInfo<'f>>],
        instances: &[InstanceInfo<'f>],
    ) {
        for instance in instances {
            let Some(Some(info)) = instance.type_index.map(|t| &types[t]) else {
                continue;
            };
            let name = &instance.name.text;
            let config = &instance.config;
            if info.active {
                if !config.seen.contains_key("_priority") {
                    self.report(
                        instance.name.span.clone(),
                        format!("active component `{name}` has no `{name}._priority`"),
                        format!("add {name}._priority = <0..=255>; to the configuration"),
                    );
                }
                if !config.seen.contains_key("_period") {
                    self.report(
                        instance.name.span.clone(),
                        format!("active component `{name}` has no `{name}._period`"),
                        format!("add {name}._period = \"10ms\"; (its task's period) to the configuration"),
                    );
                }
                continue;
            }
            for interface in &info.provides {
                let key = format!("{interface}_priority_protocol");
                if !config.seen.contains_key(key.as_str()) {
                    self.report(
                        instance.name.span.clone(),
                        format!("interface `{name}.{interface}` has no `{name}.{key}`"),
                        format!(
                            "add {name}.{key} = \"propagated\"; (or \"inherited\", \"fixed\") to the configuration"
                        ),
                    );
                }
            }
        }
    }

    fn unique_requestors(&mut self, instances: &[InstanceInfo<'f>]) {
        let mut first: HashMap<u32, &str> = HashMap::new();
        for instance in instances {
            let Some((id, setting)) = instance.config.requestor else {
                continue;
            };
            match first.get(&id) {
                Some(owner) => self.report(
                    setting.value_span.clone(),
                    format!("requestor {id} is already used by `{owner}`"),
                    "allowed: an identifier no other task has (__COUNTER__ gives one)",
                ),
                None => {
                    first.insert(id, &instance.name.text);
                }
            }
        }
    }

    /// Builds one component once its settings are known; `None` after reporting.
    fn component(
        &mut self,
        index: usize,
        instance: &InstanceInfo<'f>,
        types: &[Option<TypeInfo<'f>>],
        connections: &[(Connection, Range<usize>)],
    ) -> Option<Component> {
        let info = types.get(instance.type_index?)?.as_ref()?;
        let config = &instance.config;
        let name = instance.name.text.clone();
        if info.active {
            let body = match config.body {
                Some(setting) => Some(self.body(setting, index, info, connections)?),
                None => None,
            };
            let period = config.period?;
            let reservation = self.reservation(&name, config, period)?;
            let task = Task {
                name: name.clone(),
                priority: config.priority?,
                period,
                // Assigned once every explicit requestor is known.
                requestor: config.requestor.map_or(u32::MAX, |(id, _)| id),
                body,
                reservation,
            };
            return Some(Component {
                name,
                kind: ComponentKind::Active { tasks: vec![task] },
            });
        }
        let mut cpis = Vec::new();
        let mut all_valid = !config.broken;
        for (cpi, interface) in info.provides.iter().enumerate() {
            let default = CpiConfig::default();
            let c = config.cpis.get(&cpi).unwrap_or(&default);
            let body = match c.body {
                Some(setting) => self.body(setting, index, info, connections),
                None => Some(Vec::new()),
            };
            match (c.protocol, body) {
                (Some(protocol), Some(body)) => cpis.push(Cpi {
                    name: (*interface).to_owned(),
                    protocol: protocol.with_priority(c.priority),
                    priority: c.priority,
                    threads: c.threads,
                    body: c.body.map(|_| body),
                }),
                _ => all_valid = false,
            }
        }
        all_valid.then_some(Component {
            name,
            kind: ComponentKind::Passive { cpis },
        })
    }

    /// A `_body` string: its steps, each request resolved to the connection from this
    /// instance's uses interface. Errors point inside the string.
    fn body(
        &mut self,
        setting: &Setting,
        instance: usize,
        info: &TypeInfo<'f>,
        connections: &[(Connection, Range<usize>)],
    ) -> Option<Vec<ProcedureStep>> {
        let span = setting.value_span.clone();
        // The text between the quotes, as written, so that offsets map back exactly.
        let inner_start = span.start + 1;
        let inner = self
            .text
            .get(inner_start..span.end.saturating_sub(1))
            .unwrap_or("");
        let mut steps = Vec::new();
        let mut all_valid = true;
        let mut offset = 0;
        for piece in inner.split(';') {
            let piece_start = inner_start + offset;
            offset += piece.len() + 1;
            let words = words_with_offsets(piece);
            let Some(&(verb_at, verb)) = words.first() else {
                continue;
            };
            let step_span =
                piece_start + verb_at..piece_start + words.last().map_or(0, |(at, w)| at + w.len());
            let argument = words.get(1).map(|&(at, w)| (piece_start + at, w));
            let step = match verb {
                "execute" | "request" if words.len() != 2 => {
                    let what = if verb == "execute" {
                        "time"
                    } else {
                        "uses interface"
                    };
                    self.report(
                        step_span,
                        format!("`{verb}` takes one {what}, but has {}", words.len() - 1),
                        BODY_HELP,
                    );
                    None
                }
                "execute" => {
                    argument.and_then(|(at, text)| self.execute(at..at + text.len(), text))
                }
                "request" => argument.and_then(|(at, text)| {
                    let span = at..at + text.len();
                    self.request(
                        span,
                        text,
                        &setting.instance.text,
                        instance,
                        info,
                        connections,
                    )
                }),
                _ => {
                    self.report(
                        piece_start + verb_at..piece_start + verb_at + verb.len(),
                        format!("unknown step `{verb}`"),
                        BODY_HELP,
                    );
                    None
                }
            };
            match step {
                Some(step) => steps.push(step),
                None => all_valid = false,
            }
        }
        if all_valid && steps.is_empty() {
            self.report(span, "a body needs at least one step", BODY_HELP);
            return None;
        }
        all_valid.then_some(steps)
    }

    fn execute(&mut self, span: Range<usize>, text: &str) -> Option<ProcedureStep> {
        match units::parse_time(text) {
            Ok(time) if time.is_zero() => {
                self.report(
                    span,
                    "execute time cannot be zero",
                    "allowed: a time longer than zero, like 1ms",
                );
                None
            }
            Ok(time) => Some(ProcedureStep::Execute(time)),
            Err(e) => {
                self.report(span, e.message, e.help);
                None
            }
        }
    }

    fn request(
        &mut self,
        span: Range<usize>,
        interface: &str,
        name: &str,
        instance: usize,
        info: &TypeInfo<'f>,
        connections: &[(Connection, Range<usize>)],
    ) -> Option<ProcedureStep> {
        if let Some(id) = connections
            .iter()
            .position(|(c, _)| c.from == instance && c.interface.as_deref() == Some(interface))
        {
            return Some(ProcedureStep::Request(ConnectionId(id)));
        }
        if info.uses.contains(&interface) {
            let dropped = self.dropped_ends.iter().any(|(from, end)| {
                from.as_ref().is_none_or(|from| from == name)
                    && end.as_ref().is_none_or(|end| end == interface)
            });
            if self.fromless_connection || dropped {
                return None;
            }
            self.report(
                span,
                format!("`{name}.{interface}` is not connected"),
                format!(
                    "add connection seL4RPCCall <name>(from {name}.{interface}, to <instance>.<interface>); or remove this request"
                ),
            );
        } else {
            self.report(
                span,
                format!(
                    "component type `{}` uses no interface `{interface}`",
                    info.name
                ),
                if info.uses.is_empty() {
                    format!(
                        "add uses <Procedure> {interface}; to component type `{}`",
                        info.name
                    )
                } else {
                    format!(
                        "allowed: {} (the uses interfaces of `{}`)",
                        info.uses.join(", "),
                        info.name
                    )
                },
            );
        }
        None
    }
}

/// `b.i_priority` is (interface `i`, `_priority`); the longest interface name wins, so `a`
/// and `a_priority` are told apart.
fn cpi_key<'k>(key: &'k str, provides: &[&str]) -> Option<(usize, &'k str)> {
    let mut best: Option<(usize, &str, usize)> = None;
    for (index, interface) in provides.iter().enumerate() {
        let Some(rest) = key.strip_prefix(interface) else {
            continue;
        };
        if let Some(suffix) = CPI_SUFFIXES.iter().find(|s| **s == rest) {
            if best.is_none_or(|(_, _, len)| interface.len() > len) {
                best = Some((index, suffix, interface.len()));
            }
        }
    }
    best.map(|(index, suffix, _)| (index, &key[key.len() - suffix.len()..]))
}

/// The words of `text`, each with its byte offset.
fn words_with_offsets(text: &str) -> Vec<(usize, &str)> {
    let mut words = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        match (c.is_whitespace(), start) {
            (true, Some(s)) => {
                words.push((s, &text[s..i]));
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    if let Some(s) = start {
        words.push((s, &text[s..]));
    }
    words
}

fn instances_help(names: &[&str]) -> String {
    if names.is_empty() {
        "declare it in the composition: component <Type> <name>;".to_owned()
    } else {
        format!(
            "allowed: {} (the instances in the composition)",
            names.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interface_keys_prefer_the_longest_interface_name() {
        let provides = ["a", "a_priority"];
        assert_eq!(cpi_key("a_priority", &provides), Some((0, "_priority")));
        assert_eq!(
            cpi_key("a_priority_priority", &provides),
            Some((1, "_priority"))
        );
        assert_eq!(
            cpi_key("a_priority_protocol", &provides),
            Some((0, "_priority_protocol"))
        );
        assert_eq!(cpi_key("a_body", &provides), Some((0, "_body")));
        assert_eq!(cpi_key("b_body", &provides), None);
    }

    #[test]
    fn words_keep_their_offsets() {
        assert_eq!(
            words_with_offsets("  execute\t1ms "),
            vec![(2, "execute"), (10, "1ms")]
        );
        assert!(words_with_offsets("   ").is_empty());
    }
}
