//! Vestal's model with two criticality levels (MC-IPC paper, section VII), one vocabulary for
//! the system file, the analysis and the kernel: a [`Criticality`] level and a value at each
//! level ([`PerCriticality`]).

/// A criticality level of Vestal's model with two levels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Criticality {
    /// Low criticality (`"low"`): analysed with the low-assurance estimates, demoted in
    /// high-criticality mode.
    Low,
    /// High criticality (`"high"`): provisioned with the high-assurance estimates.
    High,
}

impl Criticality {
    /// The values a file may use.
    pub const NAMES: [&'static str; 2] = ["low", "high"];

    /// The level a value names.
    pub fn from_name(name: &str) -> Option<Criticality> {
        match name {
            "low" => Some(Criticality::Low),
            "high" => Some(Criticality::High),
            _ => None,
        }
    }

    /// The value a file writes.
    pub fn name(self) -> &'static str {
        match self {
            Criticality::Low => "low",
            Criticality::High => "high",
        }
    }
}

/// A value at each of the two criticality levels: the low-assurance estimate and the
/// high-assurance one (superscripts `L` and `H`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PerCriticality<T> {
    /// The value at the low level of assurance (superscript `L`).
    pub low: T,
    /// The value at the high level of assurance (superscript `H`).
    pub high: T,
}

impl<T: Copy> PerCriticality<T> {
    /// The same value at both levels.
    pub const fn uniform(value: T) -> Self {
        PerCriticality {
            low: value,
            high: value,
        }
    }

    /// The value at `criticality`.
    pub fn at(&self, criticality: Criticality) -> T {
        match criticality {
            Criticality::Low => self.low,
            Criticality::High => self.high,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_level_reads_back_as_itself_and_low_ranks_below_high() {
        for name in Criticality::NAMES {
            assert_eq!(
                Criticality::from_name(name).map(Criticality::name),
                Some(name)
            );
        }
        assert_eq!(Criticality::from_name("medium"), None);
        assert!(Criticality::Low < Criticality::High);
    }

    #[test]
    fn a_value_is_read_at_its_own_level() {
        let budgets = PerCriticality { low: 2, high: 5 };
        assert_eq!(budgets.at(Criticality::Low), 2);
        assert_eq!(budgets.at(Criticality::High), 5);
        assert_eq!(PerCriticality::uniform(7).at(Criticality::High), 7);
    }
}
