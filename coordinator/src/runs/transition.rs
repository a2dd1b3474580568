//! A run's life cycle as one table: what each action does to a run in each
//! state ([`RunState::transition`]). The rules around it (who may act, the
//! event each change logs) are the run administration's
//! (`crate::service::run_admin`).
//!
//! | from \ action | stop    | resume | approve | reject   | modify |
//! |---------------|---------|--------|---------|----------|--------|
//! | pending       | stopped | –      | active  | rejected | stays  |
//! | active        | stopped | –      | –       | –        | stays  |
//! | stopped       | ignored | starts | –       | –        | stays  |
//! | finished      | ignored | –      | –       | –        | –      |
//! | rejected      | ignored | –      | –       | –        | –      |
//!
//! "starts": active, or pending again for an author whose tests need
//! approval; "stays": the run keeps its state while its cap, priority or
//! share change (a cap its counted pairs reach finishes it, as the result
//! that reached it would have); "ignored": nothing changes and nothing is
//! logged; "–": refused ([`Refused`]).

use super::RunState;

/// What an author, an approver or an admin does to a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunAction {
    Stop,
    Resume,
    Approve,
    Reject,
    Modify,
}

impl RunAction {
    /// Every action, in the table's order.
    pub const ALL: [RunAction; 5] = [
        RunAction::Stop,
        RunAction::Resume,
        RunAction::Approve,
        RunAction::Reject,
        RunAction::Modify,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            RunAction::Stop => "stop",
            RunAction::Resume => "resume",
            RunAction::Approve => "approve",
            RunAction::Reject => "reject",
            RunAction::Modify => "modify",
        }
    }
}

/// Where an action takes a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transition {
    /// The run moves to this state.
    To(RunState),
    /// The run starts again: active, or pending for an author whose tests
    /// need approval.
    Start,
    /// The run keeps its state; its settings change.
    Stay,
    /// Nothing to do: the run is left as it is and nothing is logged.
    Ignore,
}

/// An action a run's state refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refused {
    pub action: RunAction,
    pub state: RunState,
}

impl Refused {
    /// Why run `id` refuses the action, as the refusal says it.
    pub fn message(&self, id: u64) -> String {
        let state = self.state.as_str();
        match self.action {
            RunAction::Resume => format!("run {id} is {state}; only a stopped run resumes"),
            RunAction::Approve | RunAction::Reject => format!("run {id} is {state}, not pending"),
            RunAction::Modify => {
                format!("run {id} is {state}; only an active, pending or stopped run changes")
            }
            RunAction::Stop => format!("run {id} is {state}; it does not stop"),
        }
    }
}

impl RunState {
    /// What `action` does to a run in this state (the table of the module
    /// docs).
    pub fn transition(self, action: RunAction) -> Result<Transition, Refused> {
        use RunAction::{Approve, Modify, Reject, Resume, Stop};
        use RunState::{Active, Finished, Pending, Rejected, Stopped};
        match (self, action) {
            (Pending | Active, Stop) => Ok(Transition::To(Stopped)),
            (Stopped | Finished | Rejected, Stop) => Ok(Transition::Ignore),
            (Stopped, Resume) => Ok(Transition::Start),
            (Pending, Approve) => Ok(Transition::To(Active)),
            (Pending, Reject) => Ok(Transition::To(Rejected)),
            (Pending | Active | Stopped, Modify) => Ok(Transition::Stay),
            (state, action) => Err(Refused { action, state }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every state and action, against the table of the module docs.
    #[test]
    fn the_table_says_what_each_action_does_in_each_state() {
        use RunState::{Active, Finished, Pending, Rejected, Stopped};
        use Transition::{Ignore, Start, Stay, To};
        let no = None;
        // Rows: states in RunState::ALL's order (pending, active, finished,
        // stopped, rejected); columns: actions in RunAction::ALL's order
        // (stop, resume, approve, reject, modify).
        let table: [[Option<Transition>; 5]; 5] = [
            [
                Some(To(Stopped)),
                no,
                Some(To(Active)),
                Some(To(Rejected)),
                Some(Stay),
            ],
            [Some(To(Stopped)), no, no, no, Some(Stay)],
            [Some(Ignore), no, no, no, no],
            [Some(Ignore), Some(Start), no, no, Some(Stay)],
            [Some(Ignore), no, no, no, no],
        ];
        assert_eq!(
            RunState::ALL,
            [Pending, Active, Finished, Stopped, Rejected]
        );
        for (state, row) in RunState::ALL.into_iter().zip(table) {
            for (action, expected) in RunAction::ALL.into_iter().zip(row) {
                let got = state.transition(action);
                match expected {
                    Some(t) => {
                        assert_eq!(got, Ok(t), "{} a {} run", action.as_str(), state.as_str())
                    }
                    None => assert_eq!(
                        got,
                        Err(Refused { action, state }),
                        "{} a {} run",
                        action.as_str(),
                        state.as_str()
                    ),
                }
            }
        }
    }

    #[test]
    fn refusals_say_what_the_run_is() {
        let refused = |state: RunState, action| state.transition(action).unwrap_err().message(7);
        assert_eq!(
            refused(RunState::Active, RunAction::Resume),
            "run 7 is active; only a stopped run resumes"
        );
        assert_eq!(
            refused(RunState::Finished, RunAction::Approve),
            "run 7 is finished, not pending"
        );
        assert_eq!(
            refused(RunState::Rejected, RunAction::Modify),
            "run 7 is rejected; only an active, pending or stopped run changes"
        );
    }
}
