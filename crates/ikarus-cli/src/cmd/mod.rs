//! One module per subcommand.

pub mod batch;
pub mod convert;
pub mod demo;
pub mod fk;
pub mod gltf_info;
pub mod ground;
pub mod info;
pub mod learn;
pub mod mocap;
pub mod motion;
pub mod retarget;
pub mod serve;
pub mod solve;
pub mod track;
