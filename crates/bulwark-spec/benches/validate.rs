//! Validation time against the number of tasks: linear since locating an offset is a binary
//! search in a line index built once per file (it was quadratic when every task's line was
//! found by rescanning the text before it).
//!
//! `validate` measures tasks partitioned onto cores; `validate-clusters` measures tasks in
//! `[[cluster]]` tables, each in a sporadic reservation of its own, whose checks (a cluster's
//! member count, the task-to-cluster index of the warnings) were made linear too;
//! `validate-components` measures component systems, a star (every client calling one
//! server) and a chain (each server calling the next), whose name and connection lookups
//! were linear scans (quadratic in all). All time `bulwark_spec::parse` (TOML parsing,
//! validation and the warnings, which it drops) of a file built outside the timed region.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

/// A valid fixed-priority scenario with `tasks` periodic tasks, five lines each.
fn scenario(tasks: usize) -> String {
    let mut text =
        String::from("name = \"many\"\npolicy = \"fixed-priority\"\nduration = \"10ms\"\n");
    for i in 0..tasks {
        text.push_str(&format!(
            "\n[[task]]\nname = \"t{i}\"\npriority = {}\nperiod = \"{}ms\"\nexecution = \"1us\"\n",
            1 + i % 200,
            1_000 + i
        ));
    }
    text
}

/// The clusters of [`clustered`], a fixed number so that the tasks are the only size that
/// grows (finding a task's cluster by its name costs the same for every task); at most
/// 4096 tasks fit in one cluster, so 32 hold 100,000.
const CLUSTERS: usize = 32;

/// A valid scenario with `tasks` periodic tasks dealt in turn to [`CLUSTERS`] clusters of 2,
/// 3 and 4 cores (95 cores in all), ordered alternately by EDF and by fixed priority, seven
/// or eight lines a task. Each task is in a sporadic reservation of its own, replenished by
/// the sporadic rule, or every third task by its order's server (CBS under EDF, SPR under
/// fixed priority); budgets are small enough that no cluster is overloaded, so the file has
/// no warning.
fn clustered(tasks: usize) -> String {
    let sizes: Vec<usize> = (0..CLUSTERS).map(|c| 2 + c % 3).collect();
    let mut text = format!(
        "name = \"clustered\"\npolicy = \"fixed-priority\"\ncores = {}\nduration = \"10ms\"\n",
        sizes.iter().sum::<usize>()
    );
    let mut next_core = 0;
    for (c, size) in sizes.iter().enumerate() {
        let ids: Vec<String> = (next_core..next_core + size)
            .map(|id| id.to_string())
            .collect();
        next_core += size;
        let order = if c.is_multiple_of(2) {
            "edf"
        } else {
            "fixed-priority"
        };
        text.push_str(&format!(
            "\n[[cluster]]\nname = \"c{c}\"\ncores = [{}]\norder = \"{order}\"\n",
            ids.join(", ")
        ));
    }
    for i in 0..tasks {
        let c = i % CLUSTERS;
        let edf = c.is_multiple_of(2);
        let priority = if edf {
            String::new()
        } else {
            format!("priority = {}\n", 1 + i % 200)
        };
        let replenishment = match (i % 3, edf) {
            (2, true) => ", replenishment = \"cbs\"",
            (2, false) => ", replenishment = \"spr\"",
            _ => "",
        };
        let period = 1_000 + i;
        text.push_str(&format!(
            "\n[[task]]\nname = \"t{i}\"\ncluster = \"c{c}\"\n{priority}period = \"{period}ms\"\n\
             execution = \"1us\"\nreservation = {{ budget = \"1us\", period = \"{period}ms\"\
             {replenishment} }}\n"
        ));
    }
    text
}

fn validate(c: &mut Criterion) {
    let mut group = c.benchmark_group("validate");
    group.sample_size(10);
    for tasks in [1_000, 10_000, 100_000] {
        // Built outside the timed region: only parsing and validation are measured.
        let text = scenario(tasks);
        group.throughput(Throughput::Elements(tasks as u64));
        group.bench_with_input(BenchmarkId::from_parameter(tasks), &text, |b, text| {
            b.iter(|| bulwark_spec::parse(text, "many.toml").map(|s| s.tasks.len()))
        });
    }
    group.finish();
}

fn validate_clusters(c: &mut Criterion) {
    let mut group = c.benchmark_group("validate-clusters");
    group.sample_size(10);
    for tasks in [1_000, 10_000, 100_000] {
        // Built and checked outside the timed region: only parsing and validation of a
        // valid file without warnings are measured.
        let text = clustered(tasks);
        match bulwark_spec::parse_checked(&text, "clustered.toml") {
            Ok((scenario, warnings)) => {
                assert_eq!(scenario.clusters.len(), CLUSTERS);
                assert!(warnings.is_empty(), "{} warnings", warnings.len());
            }
            Err(diagnostics) => panic!("{}", diagnostics.plain()),
        }
        group.throughput(Throughput::Elements(tasks as u64));
        group.bench_with_input(BenchmarkId::from_parameter(tasks), &text, |b, text| {
            b.iter(|| bulwark_spec::parse(text, "clustered.toml").map(|s| s.tasks.len()))
        });
    }
    group.finish();
}

/// A component system of `components` components on one fixed-priority core: a star of
/// active clients each calling the one server's CPI, or a chain of passive servers each
/// calling the next from its CPI's body, with one client at its head.
fn components(components: usize, star: bool) -> String {
    let mut text =
        String::from("name = \"components\"\npolicy = \"fixed-priority\"\nduration = \"10ms\"\n");
    let client = |text: &mut String, i: usize, to: &str| {
        text.push_str(&format!(
            "\n[[component]]\nname = \"c{i}\"\nkind = \"active\"\n[[component.task]]\n\
             name = \"t{i}\"\npriority = {}\nperiod = \"{}ms\"\n\
             body = [{{ execute = \"1us\" }}, {{ request = \"{to}.i\" }}]\n\
             [[connection]]\nfrom = \"c{i}\"\nto = \"{to}.i\"\n",
            1 + i % 200,
            1_000 + i
        ));
    };
    let server = |text: &mut String, name: &str, next: Option<String>| {
        let request = next
            .as_ref()
            .map_or(String::new(), |n| format!(", {{ request = \"{n}.i\" }}"));
        text.push_str(&format!(
            "\n[[component]]\nname = \"{name}\"\nkind = \"passive\"\n[[component.cpi]]\n\
             name = \"i\"\nprotocol = \"inherited\"\n\
             body = [{{ execute = \"1us\" }}{request}]\n"
        ));
        if let Some(next) = next {
            text.push_str(&format!(
                "[[connection]]\nfrom = \"{name}\"\nto = \"{next}.i\"\n"
            ));
        }
    };
    if star {
        for i in 0..components - 1 {
            client(&mut text, i, "s");
        }
        server(&mut text, "s", None);
    } else {
        client(&mut text, 0, "s1");
        for i in 1..components {
            let next = (i + 1 < components).then(|| format!("s{}", i + 1));
            server(&mut text, &format!("s{i}"), next);
        }
    }
    text
}

fn validate_components(c: &mut Criterion) {
    let mut group = c.benchmark_group("validate-components");
    group.sample_size(10);
    for (shape, star) in [("star", true), ("chain", false)] {
        for count in [1_000, 10_000] {
            // Built and checked outside the timed region.
            let text = components(count, star);
            if let Err(diagnostics) = bulwark_spec::parse(&text, "components.toml") {
                panic!("{}", diagnostics.plain());
            }
            group.throughput(Throughput::Elements(count as u64));
            group.bench_with_input(BenchmarkId::new(shape, count), &text, |b, text| {
                b.iter(|| bulwark_spec::parse(text, "components.toml").map(|s| s.tasks.len()))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, validate, validate_clusters, validate_components);
criterion_main!(benches);
