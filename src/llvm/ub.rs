//! Undefined behaviour and poison checked at run time in a copy of a module
//! (src/llvm/ub_checks.cpp), and what a generated driver may call in it.

use super::module::{IrModule, LoadError};

extern "C" {
    // src/llvm/ub_checks.cpp
    fn ctos_describe_functions(module: inkwell::llvm_sys::prelude::LLVMModuleRef) -> *mut std::ffi::c_char;
    fn ctos_instrument_ub(module: inkwell::llvm_sys::prelude::LLVMModuleRef) -> u32;
    // src/llvm/poison_checks.cpp
    fn ctos_track_poison(module: inkwell::llvm_sys::prelude::LLVMModuleRef) -> u32;
}

/// What only a driver whose runtime this tracker's code can use defines (results' shadows
/// lane by lane): a bug folder's driver written by an earlier ctos runs untracked, since
/// the instrumented code would write past its runtime's tables.
pub const TRACKING_RUNTIME: &str = "__ctos.ret_lanes";

impl IrModule {
    /// A copy of the module in its own context, for the same target, without its driver.
    pub fn copy_without_driver(&self) -> Result<IrModule, LoadError> {
        let name = self.module().get_name().to_string_lossy().into_owned();
        IrModule::from_bytes(&self.bitcode(), &name, self.target())
    }

    /// One line per externally visible function and writable global the module defines
    /// (the format is ub_checks.cpp's `ctos_describe_functions`).
    pub fn describe_functions(&self) -> String {
        // Safety: the shim returns a malloc'd C string.
        unsafe {
            let text = ctos_describe_functions(self.module().as_mut_ptr());
            let owned = std::ffi::CStr::from_ptr(text).to_string_lossy().into_owned();
            libc::free(text.cast());
            owned
        }
    }

    /// A copy of the module (without its driver) whose functions call the checking
    /// driver's runtime (`__ctos.ub`, `__ctos.access`, `__ctos.gep`) wherever they would
    /// make poison or behave undefinedly; with the number of checks.
    pub fn instrumented_for_ub(&self) -> Result<(IrModule, u32), LoadError> {
        let copy = self.copy_without_driver()?;
        let checks = unsafe { ctos_instrument_ub(copy.module().as_mut_ptr()) };
        copy.verify().map_err(|e| LoadError::Parse(format!("the checks broke the module: {e}")))?;
        Ok((copy, checks))
    }

    /// Whether the module's functions carry checks already (the unoptimized run's, which
    /// stop at any poison made; or poison tracking).
    pub fn has_checks(&self) -> bool {
        ["__ctos.ub", "__ctos.poison"].iter().any(|f| self.module().get_function(f).is_some())
    }

    /// Before the program runs, poison tracking as its `main` allows: with a driver ctos
    /// generated, the module's functions (the driver reports, after each call, what they
    /// returned and left in memory); with a `main` of its own or a driver of the user's,
    /// every function, `main` and the driver's included, with the runtime for a lone
    /// `main` linked in (poison then shows when printed, branched on, returned from
    /// `main`…), when `with_main`. Nothing when the module carries checks already.
    /// Whether it tracks.
    pub fn track_poison_for_run(&mut self, with_main: bool) -> Result<bool, LoadError> {
        if self.has_checks() {
            return Ok(false);
        }
        if self.driver_defines(TRACKING_RUNTIME) {
            self.track_poison()?;
            return Ok(true);
        }
        if !with_main || !self.has_main() {
            return Ok(false);
        }
        self.link_driver().map_err(LoadError::Parse)?;
        self.track_poison()?;
        self.set_driver_bytes(super::poison_runtime::main_tracking_runtime().as_bytes(), "ctos-poison-runtime.ll")?;
        Ok(true)
    }

    /// Track poison through the module's own functions (not its driver) until something
    /// observes it, which stops the call through the driver's runtime (`__ctos.poison`);
    /// immediate undefined behaviour stops it too. For optimized code, which may make
    /// poison nobody uses. The number of instructions that may make poison.
    pub fn track_poison(&mut self) -> Result<u32, LoadError> {
        let origins = unsafe { ctos_track_poison(self.module().as_mut_ptr()) };
        self.verify().map_err(|e| LoadError::Parse(format!("the poison tracking broke the module: {e}")))?;
        Ok(origins)
    }
}
