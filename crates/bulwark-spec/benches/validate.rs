//! Validation time against the number of tasks: linear since locating an offset is a binary
//! search in a line index built once per file (it was quadratic when every task's line was
//! found by rescanning the text before it).

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

criterion_group!(benches, validate);
criterion_main!(benches);
