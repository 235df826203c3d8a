// A guarantee tool advertises the fields of its results (`Fields`, the type its output
// schema is generated from); answering another type does not compile.
use agent_tool_result::guarantee::GuaranteeResult;
use agent_tool_result::replay::{Done, GuaranteeTool, Operation, OperationFields};
use serde::Serialize;

#[derive(Serialize)]
struct Sent {
    message_id: String,
}

impl OperationFields for Sent {
    fn of_operation(id: &str) -> Self {
        Sent { message_id: id.to_owned() }
    }
}

#[derive(Serialize)]
struct Queued {
    queue_id: String,
}

struct SendSms;

impl GuaranteeTool for SendSms {
    const NAME: &'static str = "send_sms";
    const DESCRIPTION: &'static str = "Sends one SMS.";
    const OPERATION: &'static str = "msg";
    const LOOKUP: &'static str = "lookup_sms";
    type Arguments = serde_json::Value;
    type Fields = Sent;

    async fn run(&self, _: serde_json::Value, operation: Operation) -> Done<Queued> {
        let queued = Queued { queue_id: operation.id().to_owned() };
        Done::Answer(GuaranteeResult::committed().with_fields(queued).unwrap().into())
    }
}

fn main() {}
