//! Creating a run from the page (signed in): `GET /runs/new` shows the form,
//! `POST /runs/new` builds the run from its fields with the CLI's own
//! arguments and builder ([`RunArgs::from_fields`], [`RunArgs::spec_with`]),
//! checks it as gRPC's `CreateRun` does (the wire-to-domain conversion,
//! then [`xq_coordinator::service::Runs::create`]) and redirects to the
//! new run. A refusal shows the form again, filled in, with the message.
//!
//! Every field is named as its command-line flag without the dashes. The
//! parameter fields (`dev`, `base`, `params`) hold the text of the file the
//! flag would name; no field reads the server's disk.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

use axum::Form;
use axum::extract::State;
use axum::extract::rejection::FormRejection;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Redirect};
use minijinja::context;

use crate::Web;
use crate::pages::{Page, WebError, page};
use crate::session::{Visitor, acting};
use xq_coordinator::run_args::{Pasted, RunArgs};
use xq_coordinator::runs::{RunKind, RunSpec};

/// Fields whose value is a pasted file's text, with the name it is known by
/// in messages.
const PASTED: [(&str, &str); 3] = [
    ("dev", "dev parameters (pasted)"),
    ("base", "base parameters (pasted)"),
    ("params", "parameters (pasted)"),
];

/// The fields of a submitted form, by name (repeated names keep the last
/// value, as a form never repeats one).
type Fields = BTreeMap<String, String>;

async fn show(
    web: &Web,
    visitor: &Visitor,
    status: StatusCode,
    values: &Fields,
    error: Option<String>,
) -> Page {
    let registered = web.read_registry().engines().await?;
    let engines: Vec<String> = registered.into_iter().map(|e| e.engine.name).collect();
    let kind = values
        .get("kind")
        .cloned()
        .unwrap_or_else(|| "sprt".to_owned());
    let kinds = RunKind::ALL.map(RunKind::as_str);
    let html = page(
        web,
        visitor,
        "new_run.html",
        context! { engines, values, kind, kinds, error },
    )?;
    Ok((status, Html(html)).into_response())
}

/// `GET /runs/new`.
pub async fn form(State(web): State<Arc<Web>>, visitor: Visitor) -> Page {
    show(&web, &visitor, StatusCode::OK, &Fields::new(), None).await
}

/// Why a form's run was not created, with its HTTP status.
fn refusal(e: &WebError) -> StatusCode {
    match e {
        WebError::Refused(_) => e.status(),
        WebError::Store(_) | WebError::Render(_) => StatusCode::INTERNAL_SERVER_ERROR,
        _ => StatusCode::BAD_REQUEST,
    }
}

/// The spec of a submitted form.
fn spec_of(values: &Fields) -> Result<RunSpec, WebError> {
    let kind = values.get("kind").map_or("", |k| k.as_str());
    let mut pasted = HashMap::new();
    let mut fields = Vec::new();
    for (name, value) in values {
        if matches!(name.as_str(), "kind" | "csrf") {
            continue;
        }
        let value = match PASTED.iter().find(|(field, _)| field == name) {
            Some((_, label)) if !value.trim().is_empty() => {
                pasted.insert(PathBuf::from(label), value.clone());
                (*label).to_owned()
            }
            _ => value.clone(),
        };
        fields.push((name.clone(), value));
    }
    let args =
        RunArgs::from_fields(kind, &fields).map_err(|e| WebError::BadRequest(e.to_string()))?;
    let wire = args
        .spec_with(&Pasted(pasted))
        .map_err(|e| WebError::BadRequest(format!("{e:#}")))?;
    RunSpec::try_from(wire).map_err(|e| WebError::BadRequest(e.to_string()))
}

/// `POST /runs/new`: a run by the signed-in user (an untrusted developer's
/// waits for approval).
pub async fn create(
    State(web): State<Arc<Web>>,
    visitor: Visitor,
    headers: HeaderMap,
    form: Result<Form<Vec<(String, String)>>, FormRejection>,
) -> Page {
    let values: Fields = match form {
        Ok(Form(list)) => list.into_iter().collect(),
        Err(e) => return Err(WebError::BadRequest(e.body_text())),
    };
    let result = async {
        let actor = acting(
            &web,
            &visitor,
            &headers,
            "CreateRun",
            values.get("csrf").map(String::as_str),
        )
        .await?;
        let spec = spec_of(&values)?;
        let (id, _) = web.core.runs().create(spec, false, actor).await?;
        Ok::<u64, WebError>(id)
    }
    .await;
    match result {
        Ok(id) => Ok(Redirect::to(&format!("/runs/{id}")).into_response()),
        Err(e) => {
            let mut shown = values.clone();
            shown.remove("csrf");
            show(&web, &visitor, refusal(&e), &shown, Some(e.to_string())).await
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xq_coordinator::runs::KindSpec;

    fn fields(list: &[(&str, &str)]) -> Fields {
        list.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn a_form_gives_the_spec_with_its_pasted_parameters() {
        let spec = spec_of(&fields(&[
            ("kind", "sprt"),
            ("csrf", "xqc_secret"),
            ("name", "chariot 950"),
            ("nodes", "800"),
            ("dev", "chariot_value = 950\n"),
            ("base", ""),
            ("elo1", "3"),
        ]))
        .unwrap();
        assert_eq!(spec.name, "chariot 950");
        let KindSpec::Sprt(sprt) = &spec.kind else {
            panic!("an sprt: {:?}", spec.kind)
        };
        assert_eq!(sprt.dev_params.get("chariot_value"), Some(&950));
        assert!(sprt.base_params.is_empty());
    }

    #[test]
    fn a_form_names_an_engine_built_from_a_commit_as_the_command_line_does() {
        let spec = spec_of(&fields(&[
            ("kind", "games"),
            ("nodes", "800"),
            ("pairs", "4"),
            ("dev-repo", "https://example.org/xq/engine.git"),
            ("dev-ref", "main"),
            ("dev-build", "make -j2 ARCH=$ARCH"),
            ("dev-binary", "src/engine"),
            ("dev-bench", "123456"),
            ("dev-needs", "make,g++"),
            ("base-repo", ""),
        ]))
        .unwrap();
        let KindSpec::Games(games) = &spec.kind else {
            panic!("a games run: {:?}", spec.kind)
        };
        let dev = games.lineup.dev.as_ref().expect("a dev engine");
        assert_eq!(dev.name, "engine@main");
        let source = dev.source().expect("built from source");
        assert_eq!(source.git_ref.as_deref(), Some("main"));
        assert!(source.commit.is_empty(), "resolved when the run is created");
        assert_eq!(source.needs, ["make", "g++"]);
        assert!(games.lineup.base.is_none());
        let text = spec_of(&fields(&[
            ("kind", "games"),
            ("nodes", "800"),
            ("pairs", "4"),
            ("dev-repo", "https://example.org/xq/engine.git"),
            ("dev-ref", "main"),
            ("dev-build", "make"),
            ("dev-binary", "../../etc/passwd"),
            ("dev-bench", "1"),
        ]))
        .unwrap_err()
        .to_string();
        assert!(text.contains("binary") && text.contains("'..'"), "{text}");
    }

    #[test]
    fn a_bad_form_names_what_is_wrong() {
        let err = |list: &[(&str, &str)]| spec_of(&fields(list)).unwrap_err().to_string();
        let text = err(&[
            ("kind", "sprt"),
            ("nodes", "800"),
            ("dev", "chariot_value = \"x\""),
        ]);
        assert!(
            text.contains("dev parameters (pasted)") && text.contains("not an integer"),
            "{text}"
        );
        let text = err(&[("kind", "games"), ("nodes", "800")]);
        assert!(text.contains("--pairs"), "{text}");
        let text = err(&[("kind", "games"), ("nodes", "800"), ("pairs", "0")]);
        assert!(text.contains("pairs"), "{text}");
        let text = err(&[("kind", "sprt"), ("nodes", "800"), ("rules", "nonsense")]);
        assert!(text.contains("nonsense"), "{text}");
    }
}
