//! Why a page could not be served, and the answer that says so.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use xq_coordinator::service::StoreError;

/// Why a page could not be served.
#[derive(Debug, thiserror::Error)]
pub enum WebError {
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    BadRequest(String),
    #[error("{}", .0.message())]
    Refused(tonic::Status),
    #[error("{0}")]
    Store(StoreError),
    #[error("cannot render the page: {0}")]
    Render(String),
}

impl From<StoreError> for WebError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound(m) => WebError::NotFound(m),
            StoreError::Invalid(e) => WebError::BadRequest(e.to_string()),
            StoreError::Forbidden(m) => WebError::Refused(tonic::Status::permission_denied(m)),
            other => WebError::Store(other),
        }
    }
}

impl From<minijinja::Error> for WebError {
    fn from(e: minijinja::Error) -> Self {
        WebError::Render(format!("{e:#}"))
    }
}

impl From<crate::charts::ChartError> for WebError {
    fn from(e: crate::charts::ChartError) -> Self {
        WebError::Render(e.to_string())
    }
}

impl WebError {
    pub(crate) fn status(&self) -> StatusCode {
        match self {
            WebError::NotFound(_) => StatusCode::NOT_FOUND,
            WebError::BadRequest(_) => StatusCode::BAD_REQUEST,
            WebError::Refused(s) => match s.code() {
                tonic::Code::Unauthenticated => StatusCode::UNAUTHORIZED,
                tonic::Code::PermissionDenied => StatusCode::FORBIDDEN,
                tonic::Code::ResourceExhausted => StatusCode::TOO_MANY_REQUESTS,
                tonic::Code::Aborted => StatusCode::CONFLICT,
                _ => StatusCode::SERVICE_UNAVAILABLE,
            },
            WebError::Store(_) | WebError::Render(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

impl IntoResponse for WebError {
    fn into_response(self) -> Response {
        let status = self.status();
        if status.is_server_error() {
            tracing::error!(error = %self, "web view");
        }
        let mut response = (status, format!("{status}: {self}\n")).into_response();
        response
            .extensions_mut()
            .insert(ErrorText(self.to_string()));
        if status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"xq-coordinator\""),
            );
        }
        response
    }
}

/// The message of an answer made from a [`WebError`], kept in its
/// extensions for [`crate::error_page`], which renders it as a page.
#[derive(Debug, Clone)]
pub struct ErrorText(pub String);

pub type Page = Result<Response, WebError>;
