//! [`WindowInfo`]: a resolved top-level window, one of the shapes an observation takes.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::breach;
use crate::object::FieldName;
use crate::object::{fields, read_once, required};
use crate::strict::Integral;

/// A resolved top-level window: `{ handle, title, className, processName, processId, x, y,
/// width, height }`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(
    feature = "schemars",
    derive(schemars::JsonSchema),
    schemars(deny_unknown_fields)
)]
#[serde(rename_all = "camelCase")]
pub struct WindowInfo {
    /// The native window handle.
    handle: i64,
    /// The window title.
    title: String,
    /// The window class name.
    class_name: String,
    /// The owning process's name.
    process_name: String,
    /// The owning process's id.
    process_id: u32,
    /// Left edge, in screen coordinates (may be negative on multi-monitor desktops).
    x: i32,
    /// Top edge, in screen coordinates.
    y: i32,
    /// Width in pixels.
    width: u32,
    /// Height in pixels.
    height: u32,
}

fields! {
    /// A window's fields.
    pub(crate) enum WindowField for "a window" requires ["handle", "title", "className", "processName", "processId", "x", "y", "width", "height"] {
        Handle = "handle",
        Title = "title",
        ClassName = "className",
        ProcessName = "processName",
        ProcessId = "processId",
        X = "x",
        Y = "y",
        Width = "width",
        Height = "height",
    }
}

impl WindowInfo {
    /// A window: its handle, title, class name and owning process; its bounds are set with
    /// [`WindowInfo::at`].
    ///
    /// ```
    /// use agent_tool_result::observation::WindowInfo;
    ///
    /// let window = WindowInfo::new(1_312_674, "Untitled - Notepad", "Notepad", "notepad", 8124)
    ///     .at(120, 80, 1024, 768);
    /// assert_eq!(window.width(), 1024);
    /// ```
    #[must_use]
    pub fn new(
        handle: i64,
        title: impl Into<String>,
        class_name: impl Into<String>,
        process_name: impl Into<String>,
        process_id: u32,
    ) -> Self {
        WindowInfo {
            handle,
            title: title.into(),
            class_name: class_name.into(),
            process_name: process_name.into(),
            process_id,
            x: 0,
            y: 0,
            width: 0,
            height: 0,
        }
    }

    /// Sets the bounds: left and top edges in screen coordinates, width and height in pixels.
    #[must_use]
    pub fn at(mut self, x: i32, y: i32, width: u32, height: u32) -> Self {
        (self.x, self.y, self.width, self.height) = (x, y, width, height);
        self
    }

    /// The native window handle.
    #[must_use]
    pub fn handle(&self) -> i64 {
        self.handle
    }

    /// The window title.
    #[must_use]
    pub fn title(&self) -> &str {
        &self.title
    }

    /// The window class name.
    #[must_use]
    pub fn class_name(&self) -> &str {
        &self.class_name
    }

    /// The owning process's name.
    #[must_use]
    pub fn process_name(&self) -> &str {
        &self.process_name
    }

    /// The owning process's id.
    #[must_use]
    pub fn process_id(&self) -> u32 {
        self.process_id
    }

    /// The left edge, in screen coordinates (negative on some multi-monitor desktops).
    #[must_use]
    pub fn x(&self) -> i32 {
        self.x
    }

    /// The top edge, in screen coordinates.
    #[must_use]
    pub fn y(&self) -> i32 {
        self.y
    }

    /// The width in pixels.
    #[must_use]
    pub fn width(&self) -> u32 {
        self.width
    }

    /// The height in pixels.
    #[must_use]
    pub fn height(&self) -> u32 {
        self.height
    }

    /// Reads a window from a JSON value, if it is an object of exactly that shape.
    pub(crate) fn deserialize_from(value: &Value) -> Option<WindowInfo> {
        use crate::object::FieldName;
        let object = value.as_object()?;
        let shaped = object.len() == WindowField::NAMES.len()
            && WindowField::NAMES.iter().all(|f| object.contains_key(*f));
        if !shaped {
            return None;
        }
        let window = WindowInfo::deserialize(value).ok();
        // A window-shaped object that is not a window is kept as another observation.
        breach::clear();
        window
    }
}

/// Reads only an object with exactly the nine fields, integers within their types' ranges.
impl<'de> Deserialize<'de> for WindowInfo {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(WindowVisitor)
    }
}

struct WindowVisitor;

impl<'de> serde::de::Visitor<'de> for WindowVisitor {
    type Value = WindowInfo;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a window object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<WindowInfo, A::Error> {
        use std::marker::PhantomData;
        let (mut handle, mut title, mut class_name, mut process_name) = (None, None, None, None);
        let (mut process_id, mut x, mut y, mut width, mut height) = (None, None, None, None, None);
        while let Some(field) = map.next_key::<WindowField>()? {
            let m = &mut map;
            match field {
                WindowField::Handle => read_once(m, &mut handle, "handle", Integral::new())?,
                WindowField::Title => read_once(m, &mut title, "title", PhantomData)?,
                WindowField::ClassName => read_once(m, &mut class_name, "className", PhantomData)?,
                WindowField::ProcessName => {
                    read_once(m, &mut process_name, "processName", PhantomData)?;
                }
                WindowField::ProcessId => {
                    read_once(m, &mut process_id, "processId", Integral::new())?;
                }
                WindowField::X => read_once(m, &mut x, "x", Integral::new())?,
                WindowField::Y => read_once(m, &mut y, "y", Integral::new())?,
                WindowField::Width => read_once(m, &mut width, "width", Integral::new())?,
                WindowField::Height => read_once(m, &mut height, "height", Integral::new())?,
            }
        }
        let object = WindowField::OBJECT;
        Ok(WindowInfo {
            handle: required(handle, object, "handle")?,
            title: required(title, object, "title")?,
            class_name: required(class_name, object, "className")?,
            process_name: required(process_name, object, "processName")?,
            process_id: required(process_id, object, "processId")?,
            x: required(x, object, "x")?,
            y: required(y, object, "y")?,
            width: required(width, object, "width")?,
            height: required(height, object, "height")?,
        })
    }
}
