//! Each metrics test counts into a recorder of its own: built as the local server's is
//! (`token_adapters::metrics::prometheus::builder`), set as the default recorder of the test's
//! thread, and the test's app served by a current-thread runtime on that thread, so every
//! request of the test (and nothing of the suites running beside it) is counted there. The
//! counts are then exact.

use std::future::Future;

use metrics_exporter_prometheus::PrometheusHandle;

use crate::support::app::{AppOptions, Backend, TestApp};

/// Runs `test` with an app of `backend` and the handle of its own recorder.
pub fn run<F, Fut>(backend: Backend, options: AppOptions, test: F)
where
    F: FnOnce(TestApp, PrometheusHandle) -> Fut,
    Fut: Future<Output = ()>,
{
    counted(|metrics| async move {
        if let Some(app) = TestApp::spawn_with(backend, options).await {
            test(app, metrics).await;
        }
    });
}

/// Runs the future `test` makes, which starts its own app, counting into a recorder of its own.
pub fn counted<F, Fut>(test: F)
where
    F: FnOnce(PrometheusHandle) -> Fut,
    Fut: Future<Output = ()>,
{
    // The process's recorder first, so that its install (and the cold start it counts) is
    // never made on this thread, where the count would land in the test's recorder.
    token_adapters::metrics::prometheus::install();
    let recorder = token_adapters::metrics::prometheus::builder().build_recorder();
    let handle = recorder.handle();
    let _counting_here = metrics::set_default_local_recorder(&recorder);
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(test(handle));
}

/// `on_both_stores!` for tests taking `(app, metrics)`, each with its own recorder.
macro_rules! on_both_stores_counted {
    ($($test:ident),* $(,)?) => {
        $crate::metrics::own_recorder::on_both_stores_counted!(with $crate::support::app::AppOptions::default(); $($test),*);
    };
    (with $options:expr; $($test:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[test]
                fn $test() {
                    $crate::metrics::own_recorder::run(
                        $crate::support::app::Backend::Sqlite, $options, super::$test);
                }
            )*
        }
        mod dynamodb {
            $(
                #[test]
                #[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")]
                fn $test() {
                    $crate::metrics::own_recorder::run(
                        $crate::support::app::Backend::DynamoDb, $options, super::$test);
                }
            )*
        }
    };
}
pub(crate) use on_both_stores_counted;
