//! `orogen`: bake recipes from the command line. STUB: being written.

fn main() {
    let recipe = orogen_core::Recipe::default_recipe();
    println!("{}", recipe.to_ron_string());
}
