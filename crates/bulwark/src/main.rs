//! `bulwark`: check, simulate, analyze, attack and reproduce temporal-isolation scenarios.
//!
//! A thin layer: parsing lives in `bulwark-spec`, running in `bulwark-sim`, admission tests in
//! `bulwark-analysis`, outputs and experiments in `bulwark-lab`. This crate turns arguments
//! into calls and results into text.

mod cli;
mod commands;
mod diagnostics;
mod exit;
mod output;
mod table;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    let result = match cli.command {
        cli::Command::Check(args) => commands::check::run(&args),
        cli::Command::Simulate(args) => commands::simulate::run(&args),
        cli::Command::Analyze(args) => commands::analyze::run(&args),
        cli::Command::Attack(args) => commands::attack::run(&args),
        cli::Command::Reproduce(args) => commands::reproduce::run(&args),
        cli::Command::McipcCaseStudy(args) => commands::mcipc::run(&args),
        cli::Command::Run(args) => commands::run::run(&args),
        cli::Command::Sweep(args) => commands::sweep::run(&args),
    };
    match result {
        Ok(code) => code,
        Err(message) => {
            eprintln!("error: {message}");
            exit::bad_input()
        }
    }
}
